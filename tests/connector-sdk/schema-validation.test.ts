// Tool input schemas are JSON Schema (2020-12) checked with ajv: every keyword a tool
// advertises is enforced, each problem names its field, and a schema that cannot be
// enforced is refused at registration.
import { expect } from 'chai';
import { validateAgainstSchema, type InputSchema } from '../../adapters/connector-sdk';
import { checkSchema, compileInputSchema } from '../../adapters/connector-sdk/schema-validation';

const SCHEMA: InputSchema = {
  type: 'object',
  properties: {
    sku: { type: 'string', minLength: 2, maxLength: 5 },
    quantity: { type: 'integer', minimum: 1, maximum: 10 },
    price: { type: 'number', minimum: 0 },
    gift: { type: 'boolean' },
    colour: { type: 'string', enum: ['red', 'blue'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 3 } },
    address: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    note: { description: 'anything goes' },
  },
  required: ['sku'],
  additionalProperties: false,
};

const problem = (value: unknown) => validateAgainstSchema(SCHEMA, value, 'parameters');

describe('input_schema validation', () => {
  it('accepts a value that satisfies every keyword', () => {
    expect(
      problem({ sku: 'AB', quantity: 10, price: 0.5, gift: false, colour: 'red', tags: ['a', 'bcd'], address: { city: 'Oslo' }, note: [1, { x: 2 }] }),
    ).to.equal(undefined);
  });

  it('names a missing required field', () => {
    expect(problem({})).to.equal('parameters.sku is required');
    expect(problem({ sku: 'AB', address: {} })).to.equal('parameters.address.city is required');
  });

  it('names a field of the wrong type', () => {
    expect(problem({ sku: 12 })).to.equal('parameters.sku must be a string');
    expect(problem({ sku: 'AB', quantity: 2.5 })).to.equal('parameters.quantity must be an integer');
    expect(problem({ sku: 'AB', price: '1' })).to.equal('parameters.price must be a number');
    expect(problem({ sku: 'AB', gift: 'yes' })).to.equal('parameters.gift must be a boolean');
    expect(problem({ sku: 'AB', tags: 'a' })).to.equal('parameters.tags must be an array');
    expect(problem({ sku: 'AB', address: [] })).to.equal('parameters.address must be an object');
    expect(problem([])).to.equal('parameters must be an object');
  });

  it('checks string lengths in characters, not UTF-16 units', () => {
    expect(problem({ sku: 'A' })).to.equal('parameters.sku must be at least 2 characters long');
    expect(problem({ sku: 'ABCDEF' })).to.equal('parameters.sku must be at most 5 characters long');
    expect(problem({ sku: '😀😀😀😀😀' })).to.equal(undefined);
  });

  it('checks number ranges', () => {
    expect(problem({ sku: 'AB', quantity: 0 })).to.equal('parameters.quantity must be at least 1');
    expect(problem({ sku: 'AB', quantity: 11 })).to.equal('parameters.quantity must be at most 10');
    expect(problem({ sku: 'AB', price: -0.01 })).to.equal('parameters.price must be at least 0');
  });

  it('checks enum members', () => {
    expect(problem({ sku: 'AB', colour: 'green' })).to.equal('parameters.colour must be one of: "red", "blue"');
  });

  it('checks array items, naming the index', () => {
    expect(problem({ sku: 'AB', tags: ['ok', 'long'] })).to.equal('parameters.tags[1] must be at most 3 characters long');
  });

  it('refuses undeclared properties only when additionalProperties is false', () => {
    expect(problem({ sku: 'AB', extra: 1 })).to.equal('parameters.extra is not allowed');
    expect(problem({ sku: 'AB', address: { city: 'Oslo', zip: '1' } })).to.equal('parameters.address.zip is not allowed');
    expect(validateAgainstSchema({ type: 'object', properties: {} }, { extra: 1 }, 'parameters')).to.equal(undefined);
  });

  it('does not treat inherited names as declared properties', () => {
    expect(problem({ sku: 'AB', constructor: 1 })).to.equal('parameters.constructor is not allowed');
  });

  describe('the keywords beyond the basics, which connector authors trust', () => {
    const check = (schema: InputSchema, value: unknown) => validateAgainstSchema({ type: 'object', properties: schema.properties, required: schema.required }, value, 'parameters');

    it('checks pattern', () => {
      const schema: InputSchema = { properties: { sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]+$' } } };
      expect(check(schema, { sku: 'ABC-12' })).to.equal(undefined);
      expect(check(schema, { sku: 'abc-12' })).to.equal('parameters.sku must match the pattern ^[A-Z]{3}-[0-9]+$');
    });

    it('checks format', () => {
      const schema: InputSchema = { properties: { email: { type: 'string', format: 'email' }, on: { type: 'string', format: 'date' }, id: { type: 'string', format: 'uuid' } } };
      expect(check(schema, { email: 'ada@example.com', on: '2026-11-22', id: '0b7f2a52-3c1e-4d2a-9a43-1c4a8f6b2e10' })).to.equal(undefined);
      expect(check(schema, { email: 'not an email' })).to.equal('parameters.email must be a valid email');
      expect(check(schema, { on: '2026-02-30' })).to.equal('parameters.on must be a valid date');
      expect(check(schema, { id: 'nope' })).to.equal('parameters.id must be a valid uuid');
    });

    it('checks oneOf and anyOf as a whole, at the field they are on', () => {
      const schema: InputSchema = {
        properties: {
          amount: { oneOf: [{ type: 'integer' }, { type: 'string', pattern: '^[0-9]+$' }] },
          contact: { anyOf: [{ type: 'string', format: 'email' }, { type: 'string', pattern: '^\\+[0-9]+$' }] },
        },
      };
      expect(check(schema, { amount: 12, contact: '+4712345678' })).to.equal(undefined);
      expect(check(schema, { amount: '12', contact: 'ada@example.com' })).to.equal(undefined);
      expect(check(schema, { amount: true })).to.equal('parameters.amount must match exactly one of the allowed schemas (it matches none)');
      expect(check({ properties: { n: { oneOf: [{ type: 'integer' }, { type: 'number' }] } } }, { n: 1 })).to.equal(
        'parameters.n must match exactly one of the allowed schemas (it matches several)',
      );
      expect(check(schema, { contact: 'call me' })).to.equal('parameters.contact must match at least one of the allowed schemas');
    });

    it('checks array sizes and uniqueness', () => {
      const schema: InputSchema = { properties: { skus: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 2, uniqueItems: true } } };
      expect(check(schema, { skus: ['a', 'b'] })).to.equal(undefined);
      expect(check(schema, { skus: [] })).to.equal('parameters.skus must have at least 1 item');
      expect(check(schema, { skus: ['a', 'b', 'c'] })).to.equal('parameters.skus must have at most 2 items');
      expect(check(schema, { skus: ['a', 'a'] })).to.equal('parameters.skus must not repeat an item (parameters.skus[0] and parameters.skus[1] are equal)');
    });

    it('checks const, exclusive ranges and multipleOf', () => {
      const schema: InputSchema = {
        properties: { version: { const: 2 }, ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 }, cents: { type: 'integer', multipleOf: 5 } },
      };
      expect(check(schema, { version: 2, ratio: 0.5, cents: 15 })).to.equal(undefined);
      expect(check(schema, { version: 3 })).to.equal('parameters.version must be 2');
      expect(check(schema, { ratio: 0 })).to.equal('parameters.ratio must be greater than 0');
      expect(check(schema, { ratio: 1 })).to.equal('parameters.ratio must be less than 1');
      expect(check(schema, { cents: 7 })).to.equal('parameters.cents must be a multiple of 5');
    });

    it('checks schemas for additional properties, local references and conditionals', () => {
      const labels = validateAgainstSchema({ type: 'object', additionalProperties: { type: 'string', maxLength: 3 } }, { a: 'ok', b: 'long' }, 'parameters');
      expect(labels).to.equal('parameters.b must be at most 3 characters long');
      const withRef: InputSchema = {
        type: 'object',
        $defs: { line: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] } },
        properties: { lines: { type: 'array', items: { $ref: '#/$defs/line' } } },
      };
      expect(validateAgainstSchema(withRef, { lines: [{ sku: 'a' }, {}] }, 'parameters')).to.equal('parameters.lines[1].sku is required');
      const conditional: InputSchema = {
        type: 'object',
        properties: { delivery: { enum: ['pickup', 'ship'] }, address: { type: 'string' } },
        if: { properties: { delivery: { const: 'ship' } }, required: ['delivery'] },
        then: { required: ['address'] },
      };
      expect(validateAgainstSchema(conditional, { delivery: 'pickup' }, 'parameters')).to.equal(undefined);
      expect(validateAgainstSchema(conditional, { delivery: 'ship' }, 'parameters')).to.equal('parameters.address is required');
    });

    it('names fields that are not identifiers unambiguously, and keeps null apart from the other types', () => {
      const schema: InputSchema = { properties: { 'first name': { type: ['string', 'null'] } }, required: ['first name'] };
      expect(check(schema, {})).to.equal('parameters["first name"] is required');
      expect(check(schema, { 'first name': null })).to.equal(undefined);
      expect(check(schema, { 'first name': 1 })).to.equal('parameters["first name"] must be a string or null');
    });

    it('does not let inherited names satisfy required', () => {
      expect(validateAgainstSchema({ type: 'object', required: ['constructor'] }, {}, 'parameters')).to.equal('parameters.constructor is required');
    });
  });

  describe('checking a schema at registration', () => {
    it('accepts any valid schema and compiles it', () => {
      expect(checkSchema(SCHEMA)).to.equal(undefined);
      const compiled = compileInputSchema({ type: 'object', properties: { sku: { type: 'string', pattern: '^A' } } });
      expect(compiled.valid).to.equal(true);
      if (compiled.valid) expect(compiled.validate({ sku: 'B' }, 'parameters')).to.equal('parameters.sku must match the pattern ^A');
    });

    it('names what is wrong, including keywords and formats it could not enforce', () => {
      expect(checkSchema({ type: 'date' })).to.match(/^input_schema\.type must be one of: "array", "boolean"/);
      expect(checkSchema({ type: 'object', properties: { a: { type: 'object', properties: { b: { minLength: '2' } } } } })).to.equal(
        'input_schema.properties.a.properties.b.minLength must be an integer',
      );
      expect(checkSchema({ type: 'object', required: 'a' })).to.equal('input_schema.required must be an array');
      expect(checkSchema({ type: 'array', items: { type: 'nope' } })).to.match(/^input_schema\.items\.type must be one of/);
      expect(checkSchema({ type: 'string', pattern: '(' })).to.match(/^input_schema: /);
      expect(checkSchema({ type: 'object', properties: { sku: { type: 'string', minlength: 3 } } })).to.equal('input_schema: unknown keyword: "minlength"');
      expect(checkSchema({ type: 'string', format: 'emial' })).to.match(/^input_schema: unknown format "emial"/);
      expect(checkSchema({ $ref: 'https://example.com/schema.json' })).to.match(/^input_schema: can't resolve reference/);
      expect(checkSchema('object')).to.equal('input_schema must be an object');
    });
  });
});
