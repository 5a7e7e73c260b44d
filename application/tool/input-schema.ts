// A business tool's `input_schema` is JSON Schema (draft 2020-12), checked with ajv twice:
// when the tool is saved (is it a schema ajv can compile?) and when it is called (do the
// arguments satisfy it? every problem is listed, so a person or a model can fix them all at
// once). Schemas come from tenants' OpenAPI documents, which carry keywords JSON Schema does
// not define (`example`, `x-...`): unknown keywords are ignored, not refused; a schema that
// breaks the meta-schema or does not compile is refused.

import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { DomainError, invalid } from '../../domain/shared/errors';

const ajv = new Ajv2020({ allErrors: true, strict: false, ownProperties: true, logger: false, validateFormats: true });
addFormats(ajv);

// Compiled validators by the schema's text: tools are called far more often than they change.
const compiled = new LRUCache<string, ValidateFunction>({ max: 2000 });

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why the schema cannot be used (400 `invalid_input_schema` naming `input_schema`), or null. */
export function inputSchemaProblem(schema: Record<string, unknown>, field = 'input_schema'): DomainError | null {
  // `$id` would register the schema in ajv's shared instance; tools never need it.
  if ('$id' in schema) return invalid('invalid_input_schema', `${field}: $id is not accepted`, field);
  try {
    if (!ajv.validateSchema(schema)) return invalid('invalid_input_schema', `${field}: not a JSON Schema (${ajv.errorsText(ajv.errors, { dataVar: field })})`, field);
    compile(schema);
    return null;
  } catch (error) {
    return invalid('invalid_input_schema', `${field}: the schema cannot be used (${error instanceof Error ? error.message.slice(0, 300) : String(error)})`, field);
  }
}

export interface ArgumentProblem {
  /** `arguments.petId`, `arguments.tags[1]`, or `arguments` for the whole. */
  field: string;
  message: string;
}

function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') segments.push(String(params.missingProperty));
  if (error.keyword === 'additionalProperties') segments.push(String(params.additionalProperty));
  return segments.reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : `${path}.${segment}`), 'arguments');
}

/** Every way the arguments fail the schema; empty when they satisfy it. */
export function argumentProblems(schema: Record<string, unknown>, args: unknown): ArgumentProblem[] {
  const validate = compile(schema);
  if (validate(args)) return [];
  const seen = new Set<string>();
  const problems: ArgumentProblem[] = [];
  for (const error of validate.errors ?? []) {
    const field = fieldOf(error);
    const message = error.keyword === 'required' ? 'is required' : error.keyword === 'additionalProperties' ? 'is not allowed' : (error.message ?? 'is invalid');
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    problems.push({ field, message });
  }
  return problems;
}

/** 400 `invalid_arguments`, listing every bad field in `errors`. */
export class InvalidArgumentsError extends DomainError {
  constructor(readonly problems: readonly ArgumentProblem[]) {
    super('invalid', 'invalid_arguments', `the arguments do not satisfy the tool's input_schema: ${problems.map((problem) => `${problem.field} ${problem.message}`).join('; ')}`, problems[0]?.field);
  }

  override details(): Record<string, unknown> {
    return { errors: this.problems };
  }
}

/** Throws InvalidArgumentsError unless the arguments satisfy the schema. */
export function requireValidArguments(schema: Record<string, unknown>, args: unknown): void {
  const problems = argumentProblems(schema, args);
  if (problems.length > 0) throw new InvalidArgumentsError(problems);
}
