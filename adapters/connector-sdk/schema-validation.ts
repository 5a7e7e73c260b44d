// Tool `input_schema` (spec 2.4) is JSON Schema (draft 2020-12), checked with ajv before a
// handler runs so handlers can trust their parameters: every keyword the tool advertises
// is enforced (`pattern`, `format`, `oneOf`, `minItems`, ...), since the platform and the
// connector's author both read the schema as a promise. A schema is compiled once, when
// its tool is registered; a keyword or format ajv does not know is refused there rather
// than silently ignored. A failing request is answered with the field it is about
// (`parameters.sku is required`).
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** A tool's `input_schema`: a JSON Schema (draft 2020-12) object. The common keywords are typed; any other is allowed. */
export interface InputSchema {
  type?: InputSchemaType | readonly InputSchemaType[];
  description?: string;
  properties?: Record<string, InputSchema | boolean>;
  required?: readonly string[];
  enum?: readonly unknown[];
  const?: unknown;
  items?: InputSchema | boolean;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  additionalProperties?: InputSchema | boolean;
  oneOf?: readonly (InputSchema | boolean)[];
  anyOf?: readonly (InputSchema | boolean)[];
  allOf?: readonly (InputSchema | boolean)[];
  not?: InputSchema | boolean;
  [keyword: string]: unknown;
}

/** JSON types a schema's `type` names. */
export type InputSchemaType = 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';

/** Checks a value; returns the first problem naming the field under `path` (e.g. `parameters.sku is required`), or undefined. */
export type InputValidator = (value: unknown, path: string) => string | undefined;

/** A compiled schema, or why the schema cannot be used. */
export type CompiledInputSchema = { valid: true; validate: InputValidator } | { valid: false; problem: string };

// One ajv for the process: it also caches compiled schemas by their content.
const ajv = new Ajv2020({
  // The first problem is enough to answer, and cheaper to find.
  allErrors: false,
  // Unknown keywords and formats are refused at registration...
  strictSchema: true,
  strictNumbers: true,
  // ...but the usual ways of writing schemas (a `required` naming a property declared in
  // another branch, `properties` without `type: 'object'`) are fine.
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  // `required: ['constructor']` must not be satisfied by Object.prototype.
  ownProperties: true,
  logger: false,
});
addFormats(ajv);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `path.name`, or `path["odd name"]` when the name is not an identifier. */
function childPath(path: string, name: string): string {
  return IDENTIFIER.test(name) ? `${path}.${name}` : `${path}[${JSON.stringify(name)}]`;
}

/** The JSON pointer `pointer` into `value`, written the way a developer names a field: `parameters.tags[1]`. */
function fieldPath(root: string, pointer: string, value: unknown): string {
  if (pointer === '') return root;
  let path = root;
  let current = value;
  for (const escaped of pointer.slice(1).split('/')) {
    const segment = escaped.replace(/~1/g, '/').replace(/~0/g, '~');
    path = Array.isArray(current) ? `${path}[${segment}]` : childPath(path, segment);
    current = typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[segment] : undefined;
  }
  return path;
}

function article(type: string): string {
  if (type === 'null') return 'null';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function counted(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

function listOf(values: readonly unknown[]): string {
  return values.map((member) => JSON.stringify(member)).join(', ');
}

/** One ajv error in the SDK's words, naming the field. */
function describe(error: ErrorObject, root: string, value: unknown): string {
  const path = fieldPath(root, error.instancePath, value);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(params.type) ? (params.type as string[]) : String(params.type).split(',');
      return `${path} must be ${types.map(article).join(' or ')}`;
    }
    case 'required':
      return `${childPath(path, String(params.missingProperty))} is required`;
    case 'dependentRequired':
    case 'dependencies':
      return `${childPath(path, String(params.missingProperty))} is required when ${childPath(path, String(params.property))} is present`;
    case 'additionalProperties':
      return `${childPath(path, String(params.additionalProperty))} is not allowed`;
    case 'unevaluatedProperties':
      return `${childPath(path, String(params.unevaluatedProperty))} is not allowed`;
    case 'false schema':
      return `${path} is not allowed`;
    case 'enum':
      return `${path} must be one of: ${listOf(params.allowedValues as unknown[])}`;
    case 'const':
      return `${path} must be ${JSON.stringify(params.allowedValue)}`;
    case 'minLength':
      return `${path} must be at least ${params.limit} characters long`;
    case 'maxLength':
      return `${path} must be at most ${params.limit} characters long`;
    case 'pattern':
      return `${path} must match the pattern ${String(params.pattern)}`;
    case 'format':
      return `${path} must be a valid ${String(params.format)}`;
    case 'minimum':
      return `${path} must be at least ${params.limit}`;
    case 'maximum':
      return `${path} must be at most ${params.limit}`;
    case 'exclusiveMinimum':
      return `${path} must be greater than ${params.limit}`;
    case 'exclusiveMaximum':
      return `${path} must be less than ${params.limit}`;
    case 'multipleOf':
      return `${path} must be a multiple of ${params.multipleOf}`;
    case 'minItems':
      return `${path} must have at least ${counted(Number(params.limit), 'item', 'items')}`;
    case 'maxItems':
      return `${path} must have at most ${counted(Number(params.limit), 'item', 'items')}`;
    case 'uniqueItems': {
      const [first, second] = [Number(params.i), Number(params.j)].sort((a, b) => a - b);
      return `${path} must not repeat an item (${path}[${first}] and ${path}[${second}] are equal)`;
    }
    case 'minProperties':
      return `${path} must have at least ${counted(Number(params.limit), 'property', 'properties')}`;
    case 'maxProperties':
      return `${path} must have at most ${counted(Number(params.limit), 'property', 'properties')}`;
    case 'oneOf':
      return params.passingSchemas === null
        ? `${path} must match exactly one of the allowed schemas (it matches none)`
        : `${path} must match exactly one of the allowed schemas (it matches several)`;
    case 'anyOf':
      return `${path} must match at least one of the allowed schemas`;
    case 'not':
      return `${path} must not match the excluded schema`;
    case 'propertyNames':
      return `${path} has a property name that is not allowed: ${JSON.stringify(params.propertyName)}`;
    default:
      return `${path} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * The problem to report from ajv's errors. Without `allErrors`, ajv stops at the first
 * failing keyword, but a combinator (`oneOf`, `anyOf`) lists its branches' errors before
 * its own; its own is the one that holds, so the last error is reported.
 */
function firstProblem(errors: readonly ErrorObject[], root: string, value: unknown): string {
  let index = errors.length - 1;
  while (index > 0 && errors[index].keyword === 'if') index -= 1;
  return describe(errors[index], root, value);
}

function validatorOf(validate: ValidateFunction): InputValidator {
  return (value, path) => (validate(value) ? undefined : firstProblem(validate.errors ?? [], path, value));
}

/** Compiles a tool's `input_schema`, or says what is wrong with it (naming the keyword, e.g. `input_schema.properties.sku.minLength`). */
export function compileInputSchema(schema: unknown, root = 'input_schema'): CompiledInputSchema {
  if (!isPlainObject(schema)) return { valid: false, problem: `${root} must be an object` };
  if (!ajv.validateSchema(schema)) {
    // Against the meta-schema the first error is the precise one (e.g. the allowed values
    // of `type`); the combinators after it only repeat that it failed.
    const [error] = ajv.errors ?? [];
    return { valid: false, problem: error === undefined ? `${root} is not a valid JSON Schema` : describe(error, root, schema) };
  }
  try {
    return { valid: true, validate: validatorOf(ajv.compile(schema)) };
  } catch (error) {
    // Unknown keywords and formats, unresolvable references.
    const message = error instanceof Error ? error.message.replace(/^strict mode: /, '') : String(error);
    return { valid: false, problem: `${root}: ${message}` };
  }
}

/** Checks that a schema can be used; returns the problem, or undefined. Run at tool registration. */
export function checkSchema(schema: unknown, root = 'input_schema'): string | undefined {
  const compiled = compileInputSchema(schema, root);
  return compiled.valid ? undefined : compiled.problem;
}

// For callers of `validateAgainstSchema`: each schema object is compiled once.
const compiledSchemas = new WeakMap<object, InputValidator>();

/**
 * Checks a value against a schema; returns the first problem naming the field (e.g.
 * `parameters.sku is required`), or undefined. Throws when the schema itself cannot be used.
 */
export function validateAgainstSchema(schema: InputSchema, value: unknown, path: string): string | undefined {
  let validate = compiledSchemas.get(schema);
  if (validate === undefined) {
    const compiled = compileInputSchema(schema);
    if (!compiled.valid) throw new TypeError(compiled.problem);
    validate = compiled.validate;
    compiledSchemas.set(schema, validate);
  }
  return validate(value, path);
}
