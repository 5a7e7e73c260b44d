// OpenAPI schema objects as JSON Schema (draft 2020-12), the dialect of a business tool's
// `input_schema` (application/tool/input-schema.ts), as plain JSON.
//
// - The document comes dereferenced (application/integration/openapi-document.ts): every
//   internal `$ref` is replaced by the object it points to, so a recursive schema (a Category
//   whose `parent` is a Category, a tree of Nodes) is a cycle of objects. Walking it, the
//   second visit of an object on the current path is cut with a placeholder,
//   `{"type": "object", "description": "(recursive: Category)"}`, so the result is finite,
//   plain JSON; a bound on depth and on the number of schemas walked also stops documents
//   that are finite but explode when expanded (a schema using another twice, twenty levels
//   deep). A `$ref` still present was not followed (external references are never fetched):
//   it becomes a schema that accepts anything, saying so.
// - OpenAPI 3.0's own dialect is translated: `nullable: true` adds `null` to the type (or to
//   an `enum`), boolean `exclusiveMinimum`/`exclusiveMaximum` become the numbers of 2020-12,
//   `example` becomes `examples`. OpenAPI 3.1 schemas are 2020-12 already.
// - Keywords that mean nothing to a validator or that would break a tool's schema are left
//   out: `discriminator`, `xml`, `externalDocs`, `x-` extensions, and the identifiers
//   `$id`, `$schema`, `$anchor`, `$dynamicAnchor`, `$dynamicRef`, `$defs`, `definitions`
//   (nothing refers to them once dereferenced).
// - A request's schema leaves out `readOnly` properties: the API does not take them.

export type JsonSchema = Record<string, unknown> | boolean;

/** A schema that expands past the bounds: the operation is not imported. */
export class SchemaTooLargeError extends Error {
  constructor() {
    super('its schemas expand to more than the import takes');
    this.name = 'SchemaTooLargeError';
  }
}

/** Schemas nested deeper than this are cut like a cycle. */
export const MAX_SCHEMA_DEPTH = 32;
/** Schema objects walked for one operation, at most. */
export const MAX_SCHEMA_NODES = 5000;

export interface SchemaConversion {
  /** `3.0`: OpenAPI 3.0's dialect is translated; `3.1`: the schemas are JSON Schema 2020-12. */
  dialect: '3.0' | '3.1';
  /** Component schema names by the (dereferenced) object, for the placeholder of a cut cycle. */
  names: ReadonlyMap<object, string>;
  /** How many more schema objects this operation may walk; shared by its parameters and body. */
  budget: { nodes: number };
}

const DROPPED = new Set(['nullable', 'discriminator', 'xml', 'externalDocs', 'example', '$id', '$schema', '$anchor', '$dynamicAnchor', '$dynamicRef', '$defs', 'definitions', '$ref']);
/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'additionalItems', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'contentSchema']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', 'dependentSchemas']);

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Plain JSON data (an enum, a default, an example): copied, or left out when it is not JSON (a cycle). */
function jsonData(value: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return undefined;
  }
}

function placeholder(node: Record<string, unknown>, conversion: SchemaConversion): Record<string, unknown> {
  const name = conversion.names.get(node) ?? (typeof node.title === 'string' ? node.title : 'schema');
  const type = typeof node.type === 'string' || Array.isArray(node.type) ? jsonData(node.type) : undefined;
  return { ...(type === undefined ? {} : { type }), description: `(recursive: ${name})` };
}

/** 3.0's `nullable: true` in 2020-12. */
function withNull(schema: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  if (typeof schema.type === 'string') return { ...schema, type: schema.type === 'null' ? 'null' : [schema.type, 'null'] };
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  // No type: null is accepted already unless a composition refuses it.
  return ['allOf', 'anyOf', 'oneOf', 'not', 'enum', 'const'].some((keyword) => keyword in schema) ? { anyOf: [schema, { type: 'null' }] } : schema;
}

/** 3.0's boolean exclusive bounds as 2020-12's numbers. */
function exclusiveBounds(schema: Record<string, unknown>): void {
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof schema[exclusive] !== 'boolean') continue;
    if (schema[exclusive] === true && typeof schema[bound] === 'number') {
      schema[exclusive] = schema[bound];
      delete schema[bound];
    } else {
      delete schema[exclusive];
    }
  }
}

function convert(node: unknown, conversion: SchemaConversion, path: object[]): JsonSchema {
  if (typeof node === 'boolean') return node;
  if (!isPlainObject(node)) return {};
  if (path.includes(node) || path.length >= MAX_SCHEMA_DEPTH) return placeholder(node, conversion);
  conversion.budget.nodes -= 1;
  if (conversion.budget.nodes < 0) throw new SchemaTooLargeError();
  if (typeof node.$ref === 'string') return { description: `(not followed: the reference ${node.$ref.slice(0, 200)} is outside the document)` };
  const inner = [...path, node];
  const out: Record<string, unknown> = {};
  const dropped = new Set<string>();
  for (const [keyword, value] of Object.entries(node)) {
    if (DROPPED.has(keyword) || keyword.startsWith('x-')) continue;
    if (SCHEMA_KEYWORDS.has(keyword)) {
      // 3.0 and draft 2019 tuple `items` as 2020-12's `prefixItems`.
      if (keyword === 'items' && Array.isArray(value)) out.prefixItems = value.map((item) => convert(item, conversion, inner));
      else out[keyword] = convert(value, conversion, inner);
    } else if (SCHEMA_LIST_KEYWORDS.has(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((item) => convert(item, conversion, inner));
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) && isPlainObject(value)) {
      const entries: Array<[string, JsonSchema]> = [];
      for (const [name, schema] of Object.entries(value)) {
        const converted = convert(schema, conversion, inner);
        // The API does not take what it calls read-only.
        if (keyword === 'properties' && isPlainObject(converted) && converted.readOnly === true) dropped.add(name);
        else entries.push([name, converted]);
      }
      out[keyword] = Object.fromEntries(entries);
    } else {
      const data = jsonData(value);
      if (data !== undefined) out[keyword] = data;
    }
  }
  if (Array.isArray(out.required)) {
    const required = out.required.filter((name) => typeof name === 'string' && !dropped.has(name));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  // `examples` is a list in 2020-12; 3.0 documents sometimes write one example there.
  if (out.examples !== undefined && !Array.isArray(out.examples)) delete out.examples;
  if (conversion.dialect === '3.0') {
    if (node.example !== undefined && out.examples === undefined) {
      const example = jsonData(node.example);
      if (example !== undefined) out.examples = [example];
    }
    exclusiveBounds(out);
    if (node.nullable === true) return withNull(out);
  }
  return out;
}

/** The schema as plain JSON Schema 2020-12; throws SchemaTooLargeError past the operation's budget. */
export function jsonSchemaOf(schema: unknown, conversion: SchemaConversion): JsonSchema {
  return convert(schema, conversion, []);
}
