// A tool call's arguments against the tool's `input_schema` (JSON Schema draft 2020-12, ajv
// with allErrors): a refusal lists every bad field at once, so a person testing the tool, or
// the model, can correct them all in one go.
//
// - Fields are named from the request body's root: `arguments.petId`, `arguments.items.0.sku`;
//   a missing property is named itself (`arguments.petId` is required), as is one the schema
//   does not allow.
// - Schemas come from people and OpenAPI documents, which carry keywords ajv does not know
//   (`example`, `nullable`, `xml`): those are ignored, not refused (strict off). A top-level
//   `$schema` or `$id` is dropped: the platform reads every schema as 2020-12, and an `$id`
//   must not clash with another tool's.
// - A compiled schema is kept per schema text (at most COMPILED_SCHEMAS), each in its own ajv
//   instance, so an evicted one is freed whole (ajv keeps everything it ever compiled).

import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { DomainError, conflict } from '../../domain/shared/errors';

const COMPILED_SCHEMAS = 500;

export interface ArgumentProblem {
  field: string;
  message: string;
}

/** 400 `invalid_arguments` with every bad field in `errors: [{field, message}]`. */
export class InvalidArgumentsError extends DomainError {
  constructor(readonly errors: readonly ArgumentProblem[]) {
    super('invalid', 'invalid_arguments', `the arguments do not match the tool's input_schema: ${errors.map((error) => `${error.field} ${error.message}`).join('; ')}`, 'arguments');
  }

  override details(): Record<string, unknown> {
    return { errors: this.errors };
  }
}

const compiled = new LRUCache<string, ValidateFunction>({ max: COMPILED_SCHEMAS });

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const { $schema: _dialect, $id: _id, ...rest } = schema;
  const key = JSON.stringify(rest);
  const found = compiled.get(key);
  if (found) return found;
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(rest);
  } catch (error) {
    // Tools are checked when saved; one that still fails here was saved by an older rule.
    throw conflict('invalid_input_schema', `the tool's input_schema is not a usable JSON Schema (${error instanceof Error ? error.message : String(error)}); fix the tool`);
  }
  compiled.set(key, validate);
  return validate;
}

/** `/items/0/sku` -> `arguments.items.0.sku` */
function fieldOf(instancePath: string, property?: string): string {
  const steps = instancePath
    .split('/')
    .slice(1)
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
  return ['arguments', ...steps, ...(property === undefined ? [] : [property])].join('.');
}

function problemOf(error: ErrorObject): ArgumentProblem {
  switch (error.keyword) {
    case 'required':
      return { field: fieldOf(error.instancePath, String(error.params.missingProperty)), message: 'is required' };
    case 'dependentRequired':
      return { field: fieldOf(error.instancePath, String(error.params.missingProperty)), message: `is required with ${String(error.params.property)}` };
    case 'additionalProperties':
      return { field: fieldOf(error.instancePath, String(error.params.additionalProperty)), message: 'is not a parameter of the tool' };
    case 'unevaluatedProperties':
      return { field: fieldOf(error.instancePath, String(error.params.unevaluatedProperty)), message: 'is not a parameter of the tool' };
    default:
      return { field: fieldOf(error.instancePath), message: error.message ?? `fails ${error.keyword}` };
  }
}

/** The arguments when they satisfy the schema; InvalidArgumentsError listing every bad field otherwise. */
export function checkArguments(schema: Record<string, unknown>, args: unknown): Record<string, unknown> {
  const validate = validatorOf(schema);
  if (validate(args)) {
    // The schema is of type object (the tool's rule), so valid arguments are an object.
    return args as Record<string, unknown>;
  }
  const seen = new Set<string>();
  const problems: ArgumentProblem[] = [];
  for (const problem of (validate.errors ?? []).map(problemOf)) {
    const key = `${problem.field}\u0000${problem.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push(problem);
  }
  if (problems.length === 0) problems.push({ field: 'arguments', message: 'do not match the input_schema' });
  throw new InvalidArgumentsError(problems);
}
