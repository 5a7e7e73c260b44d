// The JSON-Schema subset tools declare their parameters in: every supported keyword, the
// field named in each problem, and the registration-time check of the schema itself.
import { expect } from 'chai';
import { validateAgainstSchema, type InputSchema } from '../../adapters/connector-sdk';
import { checkSchema } from '../../adapters/connector-sdk/schema-validation';

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

  describe('checking a schema at registration', () => {
    it('accepts the supported subset', () => {
      expect(checkSchema(SCHEMA)).to.equal(undefined);
    });

    it('names what is unsupported', () => {
      expect(checkSchema({ type: 'date' })).to.match(/^input_schema\.type must be one of/);
      expect(checkSchema({ type: 'object', properties: { a: { type: 'object', properties: { b: { minLength: '2' } } } } })).to.equal(
        'input_schema.properties.a.properties.b.minLength must be a number',
      );
      expect(checkSchema({ type: 'object', required: 'a' })).to.equal('input_schema.required must be an array of property names');
      expect(checkSchema({ type: 'object', additionalProperties: { type: 'string' } })).to.match(/additionalProperties must be a boolean/);
      expect(checkSchema({ type: 'array', items: { type: 'nope' } })).to.match(/^input_schema\.items\.type/);
      expect(checkSchema('object')).to.equal('input_schema must be an object');
    });
  });
});
