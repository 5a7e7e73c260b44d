// Reading OpenAPI documents for an import, and what they propose (application/integration/
// openapi-document.ts, openapi-schema.ts, openapi-proposal.ts): the Petstore 3.0 documents and
// a 3.1 document with nested and circular $refs (tests/fixtures/openapi/), OpenAPI 3.0's
// dialect as JSON Schema 2020-12, refusals with their codes, names, and external references
// never fetched. Every proposed input schema is checked with ajv directly.

import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { stringify as toYaml } from 'yaml';
import { type OpenApiDocument, readOpenApiDocument } from '../../application/integration/openapi-document';
import { type ImportProposal, type ProposedOperation, proposeImport } from '../../application/integration/openapi-proposal';
import { inputSchemaProblem } from '../../application/tool/input-schema';
import { DomainError } from '../../domain/shared/errors';
import { toolDefinitionProblem } from '../../domain/tool/tool';
import { openApiFixture, startDocumentServer } from '../support/openapi-documents';

const DOCUMENT_URL = 'https://docs.example.com/specs/openapi.yaml';

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

async function refusal(text: string | Buffer): Promise<DomainError> {
  try {
    await readOpenApiDocument(text, 'file');
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('the document was read');
}

async function propose(text: string | Buffer, options: { url?: string | null; takenNames?: string[] } = {}): Promise<ImportProposal> {
  const document = await readOpenApiDocument(text, 'file');
  return proposeImport(document, { url: options.url === undefined ? DOCUMENT_URL : options.url, takenNames: options.takenNames ?? [] });
}

const operation = (proposal: ImportProposal, key: string): ProposedOperation => {
  const found = proposal.operations.find((candidate) => candidate.operation_key === key);
  if (!found) throw new Error(`no operation ${key} in ${proposal.operations.map((candidate) => candidate.operation_key).join(', ')}`);
  return found;
};

/** Every proposed tool is one the tool aggregate and ajv accept, and its schema is plain JSON. */
function expectUsable(proposal: ImportProposal): void {
  for (const proposed of proposal.operations) {
    const definition = { ...proposed, chat: true, enabled: true };
    expect(toolDefinitionProblem(definition), proposed.operation_key).to.equal(null);
    expect(inputSchemaProblem(proposed.input_schema), proposed.operation_key).to.equal(null);
    expect(ajv.validateSchema(proposed.input_schema), `${proposed.operation_key}: ${ajv.errorsText()}`).to.equal(true);
    expect(JSON.parse(JSON.stringify(proposed.input_schema))).to.deep.equal(proposed.input_schema);
  }
}

/** A 3.0 document of one operation whose JSON body is `schema`, with `components.schemas`. */
const bodyDocument = (schema: unknown, schemas: Record<string, unknown> = {}, openapi = '3.0.3') =>
  JSON.stringify({
    openapi,
    info: { title: 'Body', version: '1' },
    paths: { '/things': { post: { operationId: 'addThing', requestBody: { required: true, content: { 'application/json': { schema } } }, responses: { '204': { description: 'ok' } } } } },
    components: { schemas },
  });

describe('OpenAPI import: reading documents and proposing tools', () => {
  describe('the Petstore (OpenAPI 3.0)', () => {
    it('proposes a tool per operation of the expanded Petstore (YAML), with names, descriptions, mappings and JSON Schema inputs', async () => {
      const proposal = await propose(openApiFixture('petstore-expanded.yaml'));
      expect(proposal.document).to.include({ openapi: '3.0.0', title: 'Swagger Petstore', version: '1.0.0', url: DOCUMENT_URL });
      expect(proposal.document.sha256).to.match(/^[0-9a-f]{64}$/);
      expect(proposal.integration).to.deep.equal({ name: 'Swagger Petstore', base_url: 'https://petstore.swagger.io/v2', auth: { kind: 'none' }, default_headers: {}, notes: [] });
      expect(proposal.operations.map((proposed) => [proposed.operation_key, proposed.name, proposed.method, proposed.path, proposed.risk])).to.deep.equal([
        ['findPets', 'findPets', 'GET', '/pets', 'read'],
        ['addPet', 'addPet', 'POST', '/pets', 'write'],
        ['find pet by id', 'find_pet_by_id', 'GET', '/pets/{id}', 'read'],
        ['deletePet', 'deletePet', 'DELETE', '/pets/{id}', 'write'],
      ]);
      expect(proposal.skipped).to.deep.equal([]);
      const findPets = operation(proposal, 'findPets');
      expect(findPets.description.startsWith('Returns all pets from the system that the user has access to\nNam sed')).to.equal(true);
      expect([...findPets.description].length).to.equal(1024);
      expect(findPets.parameters).to.deep.equal([
        { argument: 'tags', in: 'query', name: 'tags' },
        { argument: 'limit', in: 'query', name: 'limit' },
      ]);
      expect(findPets.input_schema).to.deep.equal({
        type: 'object',
        properties: {
          tags: { type: 'array', items: { type: 'string' }, description: 'tags to filter by' },
          limit: { type: 'integer', format: 'int32', description: 'maximum number of results to return' },
        },
        additionalProperties: false,
      });
      const addPet = operation(proposal, 'addPet');
      expect(addPet.parameters).to.deep.equal([
        { argument: 'name', in: 'body', name: 'name' },
        { argument: 'tag', in: 'body', name: 'tag' },
      ]);
      expect(addPet.input_schema).to.deep.equal({ type: 'object', properties: { name: { type: 'string' }, tag: { type: 'string' } }, required: ['name'], additionalProperties: false });
      expect(operation(proposal, 'find pet by id').input_schema).to.deep.equal({
        type: 'object',
        properties: { id: { type: 'integer', format: 'int64', description: 'ID of pet to fetch' } },
        required: ['id'],
        additionalProperties: false,
      });
      expectUsable(proposal);
      const validate = ajv.compile(addPet.input_schema);
      expect(validate({ name: 'Rex', tag: 'dog' })).to.equal(true);
      expect(validate({ tag: 'dog' })).to.equal(false);
      expect(validate({ name: 'Rex', owner: 'me' })).to.equal(false);
    });

    it('reads the Petstore as JSON, and the same document as YAML alike', async () => {
      const json = openApiFixture('petstore.json');
      const proposal = await propose(json);
      expect(proposal.operations.map((proposed) => proposed.name)).to.deep.equal(['listPets', 'createPets', 'showPetById']);
      expect(operation(proposal, 'listPets').description).to.equal('List all pets');
      expect(operation(proposal, 'listPets').input_schema.properties).to.deep.equal({ limit: { type: 'integer', maximum: 100, format: 'int32', description: 'How many items to return at one time (max 100)' } });
      expect(operation(proposal, 'createPets').input_schema.required).to.deep.equal(['id', 'name']);
      expect(operation(proposal, 'showPetById').parameters).to.deep.equal([{ argument: 'petId', in: 'path', name: 'petId' }]);
      expect(proposal.integration.base_url).to.equal('http://petstore.swagger.io/v1');
      expectUsable(proposal);
      const asYaml = await propose(toYaml(JSON.parse(json.toString())));
      expect(asYaml.operations).to.deep.equal(proposal.operations);
    });
  });

  describe('an OpenAPI 3.1 document with nested and circular $refs', () => {
    let proposal: ImportProposal;
    before(async () => {
      proposal = await propose(openApiFixture('catalog-3.1.yaml'));
    });

    it('follows $ref chains through schemas, parameters and request bodies', () => {
      expect(proposal.document.openapi).to.equal('3.1.0');
      expect(proposal.operations.map((proposed) => proposed.operation_key)).to.deep.equal(['createCategory', 'getCategoryTree', 'getProduct', 'replaceProduct', 'addNodes']);
      // CategoryBody -> CategoryAlias -> CategoryRef -> Category; its read-only id is not sent.
      expect(operation(proposal, 'createCategory').parameters.map((mapping) => mapping.argument)).to.deep.equal(['name', 'parent', 'children']);
      expect(operation(proposal, 'createCategory').input_schema.required).to.deep.equal(['name']);
      // SkuParameter -> Sku -> SkuValue, declared on the path item.
      expect((operation(proposal, 'getProduct').input_schema.properties as Record<string, unknown>).sku).to.deep.equal({ type: 'string', pattern: '^[A-Z0-9-]{3,32}$', description: 'the stock keeping unit' });
      expect((operation(proposal, 'getCategoryTree').input_schema.properties as Record<string, unknown>).categoryId).to.deep.equal({ type: 'integer', minimum: 1 });
      expect(operation(proposal, 'getProduct').parameters).to.deep.equal([
        { argument: 'sku', in: 'path', name: 'sku' },
        { argument: 'X-Shop', in: 'header', name: 'X-Shop' },
      ]);
      expectUsable(proposal);
    });

    it('cuts circular schemas with a named placeholder, so the input is finite plain JSON', () => {
      const category = operation(proposal, 'createCategory').input_schema.properties as Record<string, unknown>;
      expect(category.parent).to.deep.equal({ type: 'object', description: '(recursive: Category)' });
      expect(category.children).to.deep.equal({ type: 'array', items: { type: 'object', description: '(recursive: Category)' } });
      const nodes = operation(proposal, 'addNodes');
      expect(nodes.parameters).to.deep.equal([{ argument: 'body', in: 'body', name: null }]);
      expect(nodes.input_schema).to.deep.equal({
        type: 'object',
        properties: {
          body: {
            type: 'array',
            items: {
              type: 'object',
              required: ['label'],
              properties: { label: { type: ['string', 'null'] }, children: { type: 'array', items: { type: 'object', description: '(recursive: Node)' } } },
            },
          },
        },
        required: ['body'],
        additionalProperties: false,
      });
      const validate = ajv.compile(nodes.input_schema);
      expect(validate({ body: [{ label: 'root', children: [{ label: null }] }] })).to.equal(true);
      expect(validate({ body: [{ children: [] }] })).to.equal(false);
    });

    it('sends a body whose properties would collide with a parameter as one argument', () => {
      const replace = operation(proposal, 'replaceProduct');
      expect(replace.parameters).to.deep.equal([
        { argument: 'sku', in: 'path', name: 'sku' },
        { argument: 'body', in: 'body', name: null },
      ]);
      expect(replace.input_schema.required).to.deep.equal(['sku', 'body']);
      const body = (replace.input_schema.properties as Record<string, Record<string, unknown>>).body;
      expect((body.properties as Record<string, unknown>).price).to.deep.equal({
        type: 'object',
        required: ['amount', 'currency'],
        properties: { amount: { type: 'number', exclusiveMinimum: 0 }, currency: { type: 'string', enum: ['EUR', 'USD'] } },
      });
      expect(((body.properties as Record<string, Record<string, unknown>>).category.properties as Record<string, unknown>).parent).to.deep.equal({ type: 'object', description: '(recursive: Category)' });
    });

    it('skips what a tool cannot send, with the reason', () => {
      expect(proposal.skipped).to.deep.equal([
        { operation_key: 'uploadProductImage', method: 'PUT', path: '/products/{sku}/image', reason: 'its request body is multipart (multipart/form-data: file uploads); a tool sends JSON bodies only' },
        { operation_key: 'currentSession', method: 'GET', path: '/session', reason: 'it needs the cookie session_id; a tool sends no cookies' },
      ]);
    });

    it('guesses OAuth2 client credentials with the token URL and scopes, and resolves relative URLs against the document', async () => {
      expect(proposal.integration.base_url).to.equal('https://docs.example.com/api/v2');
      expect(proposal.integration.auth).to.deep.equal({ kind: 'oauth2_client_credentials', token_url: 'https://docs.example.com/oauth/token', client_id: '', scopes: ['catalog:read', 'catalog:write'] });
      const uploaded = await propose(openApiFixture('catalog-3.1.yaml'), { url: null });
      expect(uploaded.integration.base_url).to.equal(null);
      expect(uploaded.integration.notes[0]).to.match(/^base_url: the document's first server \(\/api\/v2\) is no absolute URL/);
    });
  });

  describe("OpenAPI 3.0's schema dialect as JSON Schema 2020-12", () => {
    it('nullable, boolean exclusive bounds, example; discriminator, xml and extensions left out; read-only properties not sent', async () => {
      const schemas = {
        Animal: {
          type: 'object',
          required: ['kind', 'id'],
          discriminator: { propertyName: 'kind' },
          xml: { name: 'animal' },
          'x-internal': true,
          properties: {
            id: { type: 'integer', readOnly: true },
            kind: { type: 'string', enum: ['cat', 'dog'], nullable: true },
            weight: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 100, exclusiveMaximum: false, example: 4.2 },
            nickname: { type: 'string', nullable: true, externalDocs: { url: 'https://example.com' } },
            owner: { allOf: [{ $ref: '#/components/schemas/Owner' }], nullable: true },
          },
        },
        Owner: { type: 'object', properties: { name: { type: 'string' } } },
      };
      const proposal = await propose(bodyDocument({ $ref: '#/components/schemas/Animal' }, schemas));
      const thing = operation(proposal, 'addThing');
      expect(thing.input_schema).to.deep.equal({
        type: 'object',
        properties: {
          kind: { type: ['string', 'null'], enum: ['cat', 'dog', null] },
          weight: { type: 'number', exclusiveMinimum: 0, maximum: 100, examples: [4.2] },
          nickname: { type: ['string', 'null'] },
          owner: { anyOf: [{ allOf: [{ type: 'object', properties: { name: { type: 'string' } } }] }, { type: 'null' }] },
        },
        required: ['kind'],
        additionalProperties: false,
      });
      expectUsable(proposal);
      const validate = ajv.compile(thing.input_schema);
      expect(validate({ kind: null, weight: 100, owner: null })).to.equal(true);
      expect(validate({ kind: 'cat', weight: 0 })).to.equal(false);
    });

    it('merges allOf of plain objects into one body; keeps a composed body whole', async () => {
      const merged = operation(await propose(bodyDocument({ allOf: [{ $ref: '#/components/schemas/Base' }, { type: 'object', required: ['size'], properties: { size: { type: 'integer' } } }] }, { Base: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } })), 'addThing');
      expect(merged.parameters.map((mapping) => [mapping.argument, mapping.name])).to.deep.equal([
        ['name', 'name'],
        ['size', 'size'],
      ]);
      expect(merged.input_schema.required).to.deep.equal(['name', 'size']);
      const composed = operation(await propose(bodyDocument({ oneOf: [{ type: 'string' }, { type: 'integer' }] })), 'addThing');
      expect(composed.parameters).to.deep.equal([{ argument: 'body', in: 'body', name: null }]);
      expect(composed.input_schema.properties).to.deep.equal({ body: { oneOf: [{ type: 'string' }, { type: 'integer' }] } });
    });

    it('does not hang on mutual recursion, and skips an operation whose schemas explode when expanded', async () => {
      const mutual = await propose(
        bodyDocument(
          { $ref: '#/components/schemas/A' },
          { A: { type: 'object', properties: { b: { $ref: '#/components/schemas/B' }, self: { allOf: [{ $ref: '#/components/schemas/A' }] } } }, B: { type: 'object', properties: { a: { $ref: '#/components/schemas/A' } } } },
        ),
      );
      expect(operation(mutual, 'addThing').input_schema.properties).to.deep.equal({
        b: { type: 'object', properties: { a: { type: 'object', description: '(recursive: A)' } } },
        self: { allOf: [{ type: 'object', description: '(recursive: A)' }] },
      });
      // S0 uses S1 twice, S1 uses S2 twice, ...: 2^14 schemas once expanded.
      const schemas: Record<string, unknown> = { S14: { type: 'string' } };
      for (let level = 0; level < 14; level += 1) schemas[`S${level}`] = { type: 'object', properties: { left: { $ref: `#/components/schemas/S${level + 1}` }, right: { $ref: `#/components/schemas/S${level + 1}` } } };
      const exploding = await propose(bodyDocument({ $ref: '#/components/schemas/S0' }, schemas));
      expect(exploding.operations).to.deep.equal([]);
      expect(exploding.skipped).to.deep.equal([{ operation_key: 'addThing', method: 'POST', path: '/things', reason: 'its schemas expand to more than 5000 schema objects' }]);
    });
  });

  describe('names', () => {
    it('makes operationIds fit for a model, falls back to method_path, and keeps names unique without case', async () => {
      const document = JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'Names', version: '1' },
        paths: {
          '/orders/{orderId}/items': {
            get: { responses: { '200': { description: 'ok' } }, parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }] },
            post: { operationId: '2 add/item.v1', responses: { '200': { description: 'ok' } }, parameters: [{ name: 'orderId', in: 'path', required: true, schema: { type: 'string' } }] },
          },
          '/': { get: { operationId: 'ListOrders', responses: { '200': { description: 'ok' } } }, head: { operationId: 'probe', responses: { '200': { description: 'ok' } } } },
          '/x': { get: { operationId: 'listorders', responses: { '200': { description: 'ok' } } } },
        },
      });
      const proposal = await propose(document, { takenNames: ['LISTORDERS'] });
      expect(proposal.operations.map((proposed) => [proposed.operation_key, proposed.name])).to.deep.equal([
        ['GET /orders/{orderId}/items', 'get_orders_orderId_items'],
        ['2 add/item.v1', 'op_2_add_item_v1'],
        ['ListOrders', 'ListOrders_2'],
        ['listorders', 'listorders_3'],
      ]);
      expect(proposal.skipped).to.deep.equal([{ operation_key: 'probe', method: 'HEAD', path: '/', reason: 'HEAD is not a method a tool calls (GET, POST, PUT, PATCH, DELETE)' }]);
      expectUsable(proposal);
    });
  });

  describe('refusals', () => {
    const cases: Array<[string, string | Buffer, string]> = [
      ['Swagger 2.0', openApiFixture('swagger-2.0.json'), 'swagger_not_supported'],
      ['a JSON object that is no OpenAPI document', '{"hello": "world"}', 'not_openapi'],
      ['plain text', 'hello, this is not OpenAPI', 'not_openapi'],
      ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x9c]), 'not_openapi'],
      ['an empty document', '  \n', 'not_openapi'],
      ['YAML that refers to itself', 'openapi: 3.0.3\ninfo: &info\n  title: x\n  self: *info\n', 'not_openapi'],
      ['broken YAML', 'openapi: 3.0.3\ninfo: [unclosed\n', 'not_openapi'],
      ['OpenAPI 4', JSON.stringify({ openapi: '4.0.0', info: { title: 'x', version: '1' }, paths: {} }), 'unsupported_openapi_version'],
      ['OpenAPI without info', JSON.stringify({ openapi: '3.0.3', paths: {} }), 'invalid_openapi'],
      ['a $ref to nothing', bodyDocument({ $ref: '#/components/schemas/Missing' }), 'invalid_openapi'],
    ];
    for (const [label, text, code] of cases) {
      it(`refuses ${label} (400 ${code}, naming the field)`, async () => {
        const error = await refusal(text);
        expect([error.kind, error.code, error.field], error.message).to.deep.equal(['invalid', code, 'file']);
        expect(error.message.startsWith('file: ')).to.equal(true);
      });
    }

    it('says how to convert Swagger 2.0', async () => {
      expect((await refusal(openApiFixture('swagger-2.0.json'))).message).to.include('Convert it to OpenAPI 3 first');
    });
  });

  describe('external references', () => {
    it('are never fetched nor read from files: the schema says it was not followed', async () => {
      const server = await startDocumentServer();
      try {
        server.serve('/schemas/pet.json', JSON.stringify({ type: 'object', properties: { secret: { type: 'string' } } }), { headers: { 'content-type': 'application/json' } });
        const text = bodyDocument({ type: 'object', properties: { remote: { $ref: `${server.url}/schemas/pet.json` }, local: { $ref: '/etc/passwd' }, relative: { $ref: 'pet.json#/Pet' } } });
        const document: OpenApiDocument = await readOpenApiDocument(text, 'file');
        const proposal = proposeImport(document, { url: `${server.url}/openapi.json`, takenNames: [] });
        const properties = operation(proposal, 'addThing').input_schema.properties as Record<string, { description: string }>;
        expect(properties.remote.description).to.equal(`(not followed: the reference ${server.url}/schemas/pet.json is outside the document)`);
        expect(properties.local.description).to.equal('(not followed: the reference /etc/passwd is outside the document)');
        expect(properties.relative.description).to.equal('(not followed: the reference pet.json#/Pet is outside the document)');
        expect(server.requests).to.deep.equal([]);
      } finally {
        await server.close();
      }
    });
  });
});
