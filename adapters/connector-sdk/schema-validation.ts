// A small JSON-Schema subset for tool `input_schema` (spec 2.4), checked before a handler
// runs so handlers can trust their parameters. Supported keywords: type (object, string,
// number, integer, boolean, array, null), properties, required, enum, items, minLength,
// maxLength, minimum, maximum, additionalProperties (false only). Other keywords
// (description, title, default, format, ...) are advertised to the platform but not checked.

/** The JSON Schema subset a tool's `input_schema` is written in. */
export interface InputSchema {
  type?: InputSchemaType;
  description?: string;
  properties?: Record<string, InputSchema>;
  required?: readonly string[];
  enum?: readonly unknown[];
  items?: InputSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

/** JSON types the validator knows. */
export type InputSchemaType = 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';

const TYPES: ReadonlySet<string> = new Set<InputSchemaType>(['object', 'string', 'number', 'integer', 'boolean', 'array', 'null']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: InputSchemaType): boolean {
  switch (type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
  }
}

// Enum members are JSON values; comparing their serializations is exact for JSON and
// avoids a deep-equality routine for a rarely used case (object members).
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function describeEnum(members: readonly unknown[]): string {
  return members.map((member) => JSON.stringify(member)).join(', ');
}

/** Checks a value against a schema; returns the first problem naming the field (e.g. `parameters.sku is required`), or undefined. */
export function validateAgainstSchema(schema: InputSchema, value: unknown, path: string): string | undefined {
  if (schema.type !== undefined && !hasType(value, schema.type)) return `${path} must be ${article(schema.type)}`;
  if (schema.enum !== undefined && !schema.enum.some((member) => sameJson(member, value))) {
    return `${path} must be one of: ${describeEnum(schema.enum)}`;
  }
  if (typeof value === 'string') {
    // JSON Schema counts code points, not UTF-16 units; only pay for that when asked.
    if (schema.minLength !== undefined || schema.maxLength !== undefined) {
      const length = [...value].length;
      if (schema.minLength !== undefined && length < schema.minLength) {
        return `${path} must be at least ${schema.minLength} characters long`;
      }
      if (schema.maxLength !== undefined && length > schema.maxLength) {
        return `${path} must be at most ${schema.maxLength} characters long`;
      }
    }
  } else if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) return `${path} must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `${path} must be at most ${schema.maximum}`;
  } else if (Array.isArray(value)) {
    if (schema.items !== undefined) {
      for (let index = 0; index < value.length; index++) {
        const problem = validateAgainstSchema(schema.items, value[index], `${path}[${index}]`);
        if (problem !== undefined) return problem;
      }
    }
  } else if (isPlainObject(value)) {
    return validateObject(schema, value, path);
  }
  return undefined;
}

function validateObject(schema: InputSchema, value: Record<string, unknown>, path: string): string | undefined {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    if (value[name] === undefined) return `${path}.${name} is required`;
  }
  for (const name of Object.keys(value)) {
    const property = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
    if (property === undefined) {
      if (schema.additionalProperties === false) return `${path}.${name} is not allowed`;
      continue;
    }
    const problem = validateAgainstSchema(property, value[name], `${path}.${name}`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Checks that a schema only uses the supported subset correctly; returns the first problem, or undefined. Run at tool registration. */
export function checkSchema(schema: unknown, path = 'input_schema'): string | undefined {
  if (!isPlainObject(schema)) return `${path} must be an object`;
  if (schema.type !== undefined && (typeof schema.type !== 'string' || !TYPES.has(schema.type))) {
    return `${path}.type must be one of ${[...TYPES].join(', ')}`;
  }
  for (const keyword of ['minLength', 'maxLength', 'minimum', 'maximum'] as const) {
    if (schema[keyword] !== undefined && typeof schema[keyword] !== 'number') return `${path}.${keyword} must be a number`;
  }
  if (schema.required !== undefined) {
    if (!Array.isArray(schema.required) || !schema.required.every((name) => typeof name === 'string')) {
      return `${path}.required must be an array of property names`;
    }
  }
  if (schema.enum !== undefined && !Array.isArray(schema.enum)) return `${path}.enum must be an array`;
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean') {
    return `${path}.additionalProperties must be a boolean (schemas are not supported there)`;
  }
  if (schema.items !== undefined) {
    const problem = checkSchema(schema.items, `${path}.items`);
    if (problem !== undefined) return problem;
  }
  if (schema.properties !== undefined) {
    if (!isPlainObject(schema.properties)) return `${path}.properties must be an object`;
    for (const [name, property] of Object.entries(schema.properties)) {
      const problem = checkSchema(property, `${path}.properties.${name}`);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}
