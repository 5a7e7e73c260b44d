import { expect } from 'chai';
import {
  MAX_INPUT_SCHEMA_BYTES,
  type ToolCommand,
  type ToolDefinition,
  type ToolEvent,
  type ToolOrigin,
  pathPlaceholders,
  toolDecider,
  toolStream,
} from '../../domain/tool/tool';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

type CreateData = Extract<ToolCommand, { type: 'CreateTool' }>['data'];
type UpdatedData = Extract<ToolEvent, { type: 'ToolUpdated' }>['data'];

const spec = deciderSpec(toolDecider);
const AT = FIXED_NOW.toISOString();
const ids = { tenant_id: 't1', workspace_id: 'w1', tool_id: 'tool-1' };
const target = { kind: 'integration' as const, integration_id: 'i1' };

const DEFINITION: ToolDefinition = {
  name: 'getPet',
  description: 'Finds a pet by its id',
  method: 'GET',
  path: '/pets/{petId}',
  parameters: [
    { argument: 'petId', in: 'path', name: 'petId' },
    { argument: 'fields', in: 'query', name: 'fields' },
  ],
  input_schema: { type: 'object', properties: { petId: { type: 'string' }, fields: { type: 'string' } }, required: ['petId'] },
  chat: true,
  risk: 'read',
  enabled: true,
};
const definition = (over: Partial<ToolDefinition> = {}): ToolDefinition => ({ ...DEFINITION, ...over });
const ORIGIN: ToolOrigin = { operation_key: 'GET /pets/{petId}', imported: DEFINITION, imported_at: '2026-11-01T00:00:00.000Z' };

const create = (over: Partial<ToolDefinition> = {}, data: Partial<CreateData> = {}): ToolCommand => ({
  type: 'CreateTool',
  data: { ...ids, target, source: 'manual', definition: definition(over), origin: null, ...data },
});
const created = (over: Partial<ToolDefinition> = {}, data: Partial<Extract<ToolEvent, { type: 'ToolCreated' }>['data']> = {}): ToolEvent => ({
  type: 'ToolCreated',
  data: { ...ids, target, source: 'manual', definition: definition(over), origin: null, created_at: AT, ...data },
});
const imported = (over: Partial<ToolDefinition> = {}): ToolEvent => created(over, { source: 'openapi', origin: ORIGIN });
const updated = (data: Partial<UpdatedData> & Pick<UpdatedData, 'definition' | 'changed'>): ToolEvent => ({
  type: 'ToolUpdated',
  data: { ...ids, cause: 'edit', origin: null, edited_fields: [], updated_at: AT, ...data },
});
const edit = (changes: Partial<ToolDefinition>, tenant_id = 't1'): ToolCommand => ({ type: 'EditTool', data: { tenant_id, changes } });
const reimport = (newImport: Partial<ToolDefinition>, options: { overwrite_edits?: boolean; operation_key?: string; tenant_id?: string } = {}): ToolCommand => ({
  type: 'ReimportTool',
  data: { tenant_id: options.tenant_id ?? 't1', imported: definition(newImport), operation_key: options.operation_key ?? ORIGIN.operation_key, overwrite_edits: options.overwrite_edits ?? false },
});
const deleted: ToolEvent = { type: 'ToolDeleted', data: { ...ids, name: 'getPet', deleted_at: AT } };

describe('business tool decider (spec 4.12)', () => {
  it('lives in the stream tool-<id>, and reads the placeholders of a path in order', () => {
    expect(toolStream('tool-1')).to.equal('tool-tool-1');
    expect(pathPlaceholders('/shops/{shop}/pets/{petId}')).to.deep.equal(['shop', 'petId']);
    expect(pathPlaceholders('/pets')).to.deep.equal([]);
  });

  describe('creating', () => {
    it('creates a manual tool with its description trimmed; not twice', () => {
      spec.given([]).when(create({ description: '  Finds a pet by its id \n' })).then([created()]);
      spec.given([created()]).when(create()).thenThrows('conflict', 'tool_exists');
    });

    it('creates an imported tool keeping its origin, and a connector’s tool', () => {
      spec.given([]).when(create({}, { source: 'openapi', origin: ORIGIN })).then([imported()]);
      const connector = { kind: 'sdk_connection' as const, connection_id: 'c1' };
      spec.given([]).when(create({}, { source: 'sdk', target: connector })).then([created({}, { source: 'sdk', target: connector })]);
    });

    it('refuses a source that does not match its target or its origin', () => {
      spec.given([]).when(create({}, { source: 'sdk' })).thenThrows('invalid', 'invalid_target', 'source');
      spec.given([]).when(create({}, { target: { kind: 'sdk_connection', connection_id: 'c1' } })).thenThrows('invalid', 'invalid_target', 'source');
      spec.given([]).when(create({}, { source: 'openapi' })).thenThrows('invalid', 'invalid_origin', 'origin');
      spec.given([]).when(create({}, { origin: ORIGIN })).thenThrows('invalid', 'invalid_origin', 'origin');
    });

    it('takes names the model can call: a letter, then letters, digits, _ or -, at most 64', () => {
      spec.given([]).when(create({ name: `a${'b'.repeat(63)}` })).then([created({ name: `a${'b'.repeat(63)}` })]);
      spec.given([]).when(create({ name: 'list_pets-v2' })).then([created({ name: 'list_pets-v2' })]);
      for (const name of ['', '1pets', '_pets', 'get pet', 'get.pet', 'getPét', `a${'b'.repeat(64)}`]) {
        spec.given([]).when(create({ name })).thenThrows('invalid', 'invalid_name', 'name');
      }
    });

    it('takes a description of at most 1024 characters, lines allowed, no control characters', () => {
      spec.given([]).when(create({ description: '' })).then([created({ description: '' })]);
      spec.given([]).when(create({ description: 'line one\nline two' })).then([created({ description: 'line one\nline two' })]);
      spec.given([]).when(create({ description: 'x'.repeat(1025) })).thenThrows('invalid', 'invalid_request', 'description');
      spec.given([]).when(create({ description: 'bell \u0007' })).thenThrows('invalid', 'invalid_request', 'description');
    });

    it('takes a path template starting with /, without query, fragment, spaces or broken placeholders', () => {
      spec.given([]).when(create({ path: '/', parameters: [] })).then([created({ path: '/', parameters: [] })]);
      for (const path of ['', 'pets/{petId}', '/pets/{petId}?fields=all', '/pets/{petId}#top', '/pets /{petId}', '/pets/{petId', '/pets/petId}', '/pets/{a{petId}}', '/pets/{}', '/pets/{pet id}', `/${'p'.repeat(2048)}`]) {
        spec.given([]).when(create({ path })).thenThrows('invalid', 'invalid_path', 'path');
      }
    });

    it('takes an input schema of type object, of bounded size', () => {
      spec.given([]).when(create({ input_schema: { type: 'array' } })).thenThrows('invalid', 'invalid_input_schema', 'input_schema');
      spec.given([]).when(create({ input_schema: { properties: { petId: {} } } })).thenThrows('invalid', 'invalid_input_schema', 'input_schema');
      const huge = { type: 'object', properties: { petId: { type: 'string' }, fields: { type: 'string', description: 'x'.repeat(MAX_INPUT_SCHEMA_BYTES) } } };
      spec.given([]).when(create({ input_schema: huge })).thenThrows('invalid', 'invalid_input_schema', 'input_schema');
    });

    it('maps each argument once, to a property of the schema, and every path placeholder to an argument', () => {
      const refused: Array<[ToolDefinition['parameters'], string, string]> = [
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'pet id', in: 'query', name: 'q' }], 'invalid_parameters', 'parameters.1.argument'],
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'petId', in: 'query', name: 'id' }], 'invalid_parameters', 'parameters.1.argument'],
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'colour', in: 'query', name: 'colour' }], 'invalid_parameters', 'parameters.1.argument'],
        [[{ argument: 'petId', in: 'query', name: null }], 'invalid_parameters', 'parameters.0.name'],
        [[{ argument: 'petId', in: 'path', name: '' }], 'invalid_parameters', 'parameters.0.name'],
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'fields', in: 'header', name: 'X Fields' }], 'invalid_header', 'parameters.1.name'],
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'fields', in: 'header', name: 'Authorization' }], 'reserved_header', 'parameters.1.name'],
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'fields', in: 'path', name: 'petId' }], 'invalid_parameters', 'parameters.1.name'],
        // The path has no placeholder {fields}.
        [[{ argument: 'petId', in: 'path', name: 'petId' }, { argument: 'fields', in: 'path', name: 'fields' }], 'invalid_parameters', 'parameters'],
        // The placeholder {petId} is not mapped.
        [[{ argument: 'petId', in: 'query', name: 'petId' }], 'invalid_parameters', 'parameters'],
        [[], 'invalid_parameters', 'parameters'],
      ];
      for (const [parameters, code, field] of refused) spec.given([]).when(create({ parameters })).thenThrows('invalid', code, field);
      const tooMany = Array.from({ length: 101 }, (_, index) => ({ argument: `a${index}`, in: 'query' as const, name: `q${index}` }));
      spec.given([]).when(create({ path: '/pets', parameters: tooMany, input_schema: { type: 'object' } })).thenThrows('invalid', 'invalid_parameters', 'parameters');
    });

    it('compares header names without case, and allows any argument when the schema declares no properties', () => {
      const headers = [
        { argument: 'a', in: 'header' as const, name: 'X-Shop' },
        { argument: 'b', in: 'header' as const, name: 'x-shop' },
      ];
      spec.given([]).when(create({ path: '/pets', parameters: headers, input_schema: { type: 'object' } })).thenThrows('invalid', 'invalid_parameters', 'parameters.1.name');
      const free = [{ argument: 'anything', in: 'query' as const, name: 'q' }];
      spec.given([]).when(create({ path: '/pets', parameters: free, input_schema: { type: 'object' } })).then([created({ path: '/pets', parameters: free, input_schema: { type: 'object' } })]);
    });

    it('sends an argument as the whole body only when no other argument goes in the body', () => {
      const schema = { type: 'object', properties: { pet: { type: 'object' }, tag: { type: 'string' } } };
      const whole = [{ argument: 'pet', in: 'body' as const, name: null }];
      spec.given([]).when(create({ method: 'POST', path: '/pets', parameters: whole, input_schema: schema, risk: 'write' })).then([
        created({ method: 'POST', path: '/pets', parameters: whole, input_schema: schema, risk: 'write' }),
      ]);
      for (const other of [{ argument: 'tag', in: 'body' as const, name: 'tag' }, { argument: 'tag', in: 'body' as const, name: null }]) {
        spec.given([]).when(create({ method: 'POST', path: '/pets', parameters: [...whole, other], input_schema: schema })).thenThrows('invalid', 'invalid_parameters', 'parameters');
      }
    });
  });

  describe('editing', () => {
    it('changes the fields given and says which; the rest stays', () => {
      spec
        .given([created()])
        .when(edit({ description: ' Finds one pet ', risk: 'approval_required' }))
        .then([updated({ definition: definition({ description: 'Finds one pet', risk: 'approval_required' }), changed: ['description', 'risk'] })]);
      const renamed = definition({ name: 'findPet', path: '/animals/{id}', parameters: [{ argument: 'petId', in: 'path', name: 'id' }] });
      spec
        .given([created()])
        .when(edit({ name: 'findPet', path: '/animals/{id}', parameters: renamed.parameters }))
        .then([updated({ definition: renamed, changed: ['name', 'path', 'parameters'] })]);
    });

    it('records nothing for the same values again (a schema with its keys in another order is the same)', () => {
      spec.given([created()]).when(edit({})).thenNothingHappened();
      spec.given([created()]).when(edit({ name: 'getPet', description: ' Finds a pet by its id ', chat: true })).thenNothingHappened();
      spec.given([created()]).when(edit({ input_schema: { required: ['petId'], properties: { fields: { type: 'string' }, petId: { type: 'string' } }, type: 'object' } })).thenNothingHappened();
    });

    it('refuses an edit that leaves the definition broken, naming the field', () => {
      spec.given([created()]).when(edit({ path: '/pets/{petId}/{owner}' })).thenThrows('invalid', 'invalid_parameters', 'parameters');
      spec.given([created()]).when(edit({ input_schema: { type: 'object', properties: { petId: { type: 'string' } } } })).thenThrows('invalid', 'invalid_parameters', 'parameters.1.argument');
      spec.given([created()]).when(edit({ name: 'get pet' })).thenThrows('invalid', 'invalid_name', 'name');
    });

    it('tracks no edited fields on a tool that was not imported', () => {
      spec.given([created()]).when(edit({ description: 'Mine' })).then([updated({ definition: definition({ description: 'Mine' }), changed: ['description'], edited_fields: [] })]);
    });

    it('tracks, on an imported tool, the imported fields a person changed, not the tenant’s own choices', () => {
      spec
        .given([imported()])
        .when(edit({ description: 'Ours', chat: false }))
        .then([updated({ definition: definition({ description: 'Ours', chat: false }), changed: ['description', 'chat'], origin: ORIGIN, edited_fields: ['description'] })]);
      spec.given([imported()]).when(edit({ risk: 'approval_required', enabled: false })).then([
        updated({ definition: definition({ risk: 'approval_required', enabled: false }), changed: ['risk', 'enabled'], origin: ORIGIN, edited_fields: [] }),
      ]);
      const named = updated({ definition: definition({ name: 'fetchPet' }), changed: ['name'], origin: ORIGIN, edited_fields: ['name'] });
      spec
        .given([imported(), named])
        .when(edit({ description: 'Ours' }))
        .then([updated({ definition: definition({ name: 'fetchPet', description: 'Ours' }), changed: ['description'], origin: ORIGIN, edited_fields: ['name', 'description'] })]);
    });

    it('forgets an edit changed back to the imported value', () => {
      const ours = updated({ definition: definition({ description: 'Ours' }), changed: ['description'], origin: ORIGIN, edited_fields: ['description'] });
      spec.given([imported(), ours]).when(edit({ description: DEFINITION.description })).then([updated({ definition: definition(), changed: ['description'], origin: ORIGIN, edited_fields: [] })]);
    });
  });

  describe('reimporting', () => {
    const origin = (over: Partial<ToolDefinition> = {}, operation_key = ORIGIN.operation_key): ToolOrigin => ({ operation_key, imported: definition(over), imported_at: AT });
    const ours = updated({ definition: definition({ description: 'Ours' }), changed: ['description'], origin: ORIGIN, edited_fields: ['description'] });

    it('takes the API’s changes and moves the origin on', () => {
      spec
        .given([imported()])
        .when(reimport({ description: 'Finds a pet' }))
        .then([updated({ definition: definition({ description: 'Finds a pet' }), changed: ['description'], cause: 'reimport', origin: origin({ description: 'Finds a pet' }) })]);
    });

    it('keeps a person’s edits and takes the rest', () => {
      const moved = { path: '/v2/pets/{petId}', description: 'Finds a pet' };
      spec
        .given([imported(), ours])
        .when(reimport(moved))
        .then([updated({ definition: definition({ description: 'Ours', path: '/v2/pets/{petId}' }), changed: ['path'], cause: 'reimport', origin: origin(moved), edited_fields: ['description'] })]);
    });

    it('overwrites a person’s edits when asked', () => {
      spec
        .given([imported(), ours])
        .when(reimport({ description: 'Finds a pet' }, { overwrite_edits: true }))
        .then([updated({ definition: definition({ description: 'Finds a pet' }), changed: ['description'], cause: 'reimport', origin: origin({ description: 'Finds a pet' }), edited_fields: [] })]);
    });

    it('never changes chat, risk or enabled, which are the tenant’s choices', () => {
      const chosen = updated({ definition: definition({ risk: 'approval_required', chat: false }), changed: ['chat', 'risk'], origin: ORIGIN });
      spec
        .given([imported(), chosen])
        .when(reimport({ description: 'Finds a pet', risk: 'read', chat: true }))
        .then([
          updated({
            definition: definition({ description: 'Finds a pet', risk: 'approval_required', chat: false }),
            changed: ['description'],
            cause: 'reimport',
            origin: origin({ description: 'Finds a pet', risk: 'read', chat: true }),
          }),
        ]);
    });

    it('records nothing for the same import again; a new operation key alone moves the origin', () => {
      spec.given([imported()]).when(reimport({})).thenNothingHappened();
      spec.given([imported(), ours]).when(reimport({})).thenNothingHappened();
      spec.given([imported()]).when(reimport({}, { operation_key: 'getPetById' })).then([updated({ definition: definition(), changed: [], cause: 'reimport', origin: origin({}, 'getPetById') })]);
    });

    it('refuses an import that would leave the definition broken, and a tool that was not imported', () => {
      spec.given([imported()]).when(reimport({ path: '/pets/{petId}/{owner}' })).thenThrows('invalid', 'invalid_parameters', 'parameters');
      spec.given([created()]).when(reimport({ description: 'x' })).thenThrows('conflict', 'tool_not_imported');
    });
  });

  describe('deleting, and tools that are not there', () => {
    it('deletes with the name the tool had', () => {
      spec.given([created()]).when({ type: 'DeleteTool', data: { tenant_id: 't1' } }).then([deleted]);
      const renamed = updated({ definition: definition({ name: 'findPet' }), changed: ['name'] });
      spec.given([created(), renamed]).when({ type: 'DeleteTool', data: { tenant_id: 't1' } }).then([{ type: 'ToolDeleted', data: { ...ids, name: 'findPet', deleted_at: AT } }]);
    });

    it('answers tool_not_found for a missing, deleted or other tenant’s tool, on every command', () => {
      for (const command of [edit({ description: 'x' }), reimport({ description: 'x' }), { type: 'DeleteTool', data: { tenant_id: 't1' } } as ToolCommand]) {
        spec.given([]).when(command).thenThrows('not_found', 'tool_not_found');
        spec.given([imported(), deleted]).when(command).thenThrows('not_found', 'tool_not_found');
      }
      spec.given([imported()]).when(edit({ description: 'x' }, 't2')).thenThrows('not_found', 'tool_not_found');
      spec.given([imported()]).when(reimport({ description: 'x' }, { tenant_id: 't2' })).thenThrows('not_found', 'tool_not_found');
      spec.given([imported()]).when({ type: 'DeleteTool', data: { tenant_id: 't2' } }).thenThrows('not_found', 'tool_not_found');
    });

    it('cannot be created again under the id of a deleted tool', () => {
      spec.given([created(), deleted]).when(create()).thenThrows('conflict', 'tool_exists');
    });
  });
});
