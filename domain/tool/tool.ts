// The business tool aggregate (spec 4.12, issue #12 point 3): one operation of a tenant's API
// that the assistant may call, in a workspace. Stream `tool-<id>`.
//
// - A tool's definition says how a call is made: the HTTP method, a path template under its
//   integration's base URL (`/pets/{petId}`), where each argument goes (`parameters`: path,
//   query, header or body), the JSON Schema its arguments must satisfy (`input_schema`),
//   whether the assistant may offer it in chat (`chat`), and its risk tier:
//     read              called at once (it changes nothing);
//     write             called at once, and shown as an action in the conversation;
//     approval_required a call waits until an owner or admin approves it (tool-call aggregate).
// - `source` says where it came from: `manual` (written by a person), `openapi` (an import;
//   `origin` keeps the operation and the definition as imported, so a reimport can tell a
//   person's local edits from the API's changes), or `sdk` (a connector's tool, #13).
// - `edited_fields` lists the definition fields a person changed since the last import: a
//   reimport leaves those alone unless asked to overwrite them.
// - Whether the input schema is a valid JSON Schema is checked by the application (ajv); this
//   checks everything else about the definition, and that each mapped argument is a property
//   of the schema and each path placeholder is mapped.
// - Every command names the caller's tenant: another tenant's tool answers `tool_not_found`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { normalizeText, textProblem } from '../shared/text';
import { headerNameProblem } from '../integration/integration';

export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const TOOL_DESCRIPTION_MAX_LENGTH = 1024;
export const TOOL_PATH_MAX_LENGTH = 2048;
export const MAX_TOOL_PARAMETERS = 100;
/** The serialized input schema, at most: a tool's schema is sent to the model with every chat turn. */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const HttpMethod = t.keyof({ GET: null, POST: null, PUT: null, PATCH: null, DELETE: null });
export type HttpMethod = t.TypeOf<typeof HttpMethod>;

export const RISK_TIERS = ['read', 'write', 'approval_required'] as const;
export const RiskTier = t.keyof({ read: null, write: null, approval_required: null });
export type RiskTier = t.TypeOf<typeof RiskTier>;

export const ToolSource = t.keyof({ manual: null, openapi: null, sdk: null });
export type ToolSource = t.TypeOf<typeof ToolSource>;

export const PARAMETER_LOCATIONS = ['path', 'query', 'header', 'body'] as const;
/**
 * Where one argument goes: the path placeholder, query parameter or header called `name`, or
 * the body property `name`; `name: null` (body only) sends the argument as the whole body.
 */
export const ParameterMapping = t.type({
  argument: t.string,
  in: t.keyof({ path: null, query: null, header: null, body: null }),
  name: t.union([t.string, t.null]),
});
export type ParameterMapping = t.TypeOf<typeof ParameterMapping>;

/** A JSON Schema object (checked for validity by the application). */
export const JsonSchemaObject = t.UnknownRecord;
export type JsonSchemaObject = Record<string, unknown>;

export const ToolDefinition = t.type({
  name: t.string,
  description: t.string,
  method: HttpMethod,
  path: t.string,
  parameters: t.array(ParameterMapping),
  input_schema: JsonSchemaObject,
  chat: t.boolean,
  risk: RiskTier,
  enabled: t.boolean,
});
export type ToolDefinition = t.TypeOf<typeof ToolDefinition>;
export type ToolField = keyof ToolDefinition;
export const TOOL_FIELDS: readonly ToolField[] = ['name', 'description', 'method', 'path', 'parameters', 'input_schema', 'chat', 'risk', 'enabled'];
/** Fields an import describes; `chat`, `risk` and `enabled` are the tenant's own choices and a reimport never changes them. */
export const IMPORTED_FIELDS: readonly ToolField[] = ['name', 'description', 'method', 'path', 'parameters', 'input_schema'];

/** Where an imported tool came from: the operation (`METHOD /path`, or its operationId) and the definition as imported then. */
export const ToolOrigin = t.type({
  operation_key: t.string,
  imported: ToolDefinition,
  imported_at: t.string,
});
export type ToolOrigin = t.TypeOf<typeof ToolOrigin>;

/** What the tool calls: an integration (manual and openapi tools) or an SDK connection (#13). */
export const ToolTarget = t.union([t.type({ kind: t.literal('integration'), integration_id: t.string }), t.type({ kind: t.literal('sdk_connection'), connection_id: t.string })]);
export type ToolTarget = t.TypeOf<typeof ToolTarget>;

const ToolIdentity = {
  tenant_id: t.string,
  workspace_id: t.string,
  tool_id: t.string,
};

export const ToolCreated = declareEvent(
  'ToolCreated',
  t.type({ ...ToolIdentity, target: ToolTarget, source: ToolSource, definition: ToolDefinition, origin: t.union([ToolOrigin, t.null]), created_at: t.string }),
);
export const ToolUpdated = declareEvent(
  'ToolUpdated',
  t.type({
    ...ToolIdentity,
    definition: ToolDefinition,
    /** The fields this change changed. */
    changed: t.array(t.string),
    /** `edit`: a person's change; `reimport`: the API's definition changed (origin moves on). */
    cause: t.keyof({ edit: null, reimport: null }),
    origin: t.union([ToolOrigin, t.null]),
    edited_fields: t.array(t.string),
    updated_at: t.string,
  }),
);
export const ToolDeleted = declareEvent('ToolDeleted', t.type({ ...ToolIdentity, name: t.string, deleted_at: t.string }));

export const toolEvents = eventGroup('tool', [ToolCreated, ToolUpdated, ToolDeleted]);
export type ToolEvent = GroupEvent<typeof toolEvents>;

export type ToolCommand =
  | {
      type: 'CreateTool';
      data: { tenant_id: string; workspace_id: string; tool_id: string; target: ToolTarget; source: ToolSource; definition: ToolDefinition; origin: ToolOrigin | null };
    }
  /** A person's change: an absent field keeps its value. */
  | { type: 'EditTool'; data: { tenant_id: string; changes: Partial<ToolDefinition> } }
  /**
   * A reimport: the operation's new definition. Fields a person edited keep their value unless
   * `overwrite_edits`; the origin moves to the new definition either way.
   */
  | { type: 'ReimportTool'; data: { tenant_id: string; imported: ToolDefinition; operation_key: string; overwrite_edits: boolean } }
  | { type: 'DeleteTool'; data: { tenant_id: string } };

export interface LiveTool {
  status: 'active';
  tenant_id: string;
  workspace_id: string;
  tool_id: string;
  target: ToolTarget;
  source: ToolSource;
  definition: ToolDefinition;
  origin: ToolOrigin | null;
  edited_fields: ToolField[];
}

export type ToolState = { status: 'absent' } | LiveTool | { status: 'deleted'; tenant_id: string };

export const toolStream = (toolId: string): string => toStreamName(toolEvents.category, toolId);

const PLACEHOLDER = /\{([^{}]*)\}/g;

/** The placeholders of a path template, in order (`/pets/{petId}` -> petId). */
export function pathPlaceholders(path: string): string[] {
  return [...path.matchAll(PLACEHOLDER)].map((match) => match[1]);
}

/** The top-level properties the schema declares, or null when it declares none (any argument is allowed then). */
function schemaProperties(schema: JsonSchemaObject): Set<string> | null {
  const properties = schema.properties;
  return properties !== null && typeof properties === 'object' && !Array.isArray(properties) ? new Set(Object.keys(properties)) : null;
}

function pathProblem(path: string): DomainError | null {
  if (path.length === 0 || path.length > TOOL_PATH_MAX_LENGTH || !path.startsWith('/')) return invalid('invalid_path', `path: expected a path template starting with / of at most ${TOOL_PATH_MAX_LENGTH} characters, such as /pets/{petId}`, 'path');
  if (/[\s#?]/.test(path) || /[\u0000-\u001f\u007f]/.test(path)) return invalid('invalid_path', 'path: no spaces, control characters, ? or # (query parameters are mapped, not written in the path)', 'path');
  const unbalanced = path.replace(PLACEHOLDER, '');
  if (unbalanced.includes('{') || unbalanced.includes('}')) return invalid('invalid_path', 'path: every { needs its } and placeholders do not nest', 'path');
  for (const name of pathPlaceholders(path)) {
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(name)) return invalid('invalid_path', `path: the placeholder {${name}} must be 1 to 100 letters, digits, _ . -`, 'path');
  }
  return null;
}

function parametersProblem(definition: Pick<ToolDefinition, 'path' | 'parameters' | 'input_schema'>): DomainError | null {
  const { parameters, path, input_schema } = definition;
  if (parameters.length > MAX_TOOL_PARAMETERS) return invalid('invalid_parameters', `parameters: at most ${MAX_TOOL_PARAMETERS}`, 'parameters');
  const declared = schemaProperties(input_schema);
  const arguments_ = new Set<string>();
  const targets = new Set<string>();
  let wholeBody = false;
  let bodyProperties = false;
  for (const [index, mapping] of parameters.entries()) {
    const field = `parameters.${index}`;
    if (!/^[A-Za-z0-9_.-]{1,100}$/.test(mapping.argument)) return invalid('invalid_parameters', `${field}.argument: expected 1 to 100 letters, digits, _ . -`, `${field}.argument`);
    if (arguments_.has(mapping.argument)) return invalid('invalid_parameters', `${field}.argument: ${mapping.argument} is mapped twice`, `${field}.argument`);
    arguments_.add(mapping.argument);
    if (declared !== null && !declared.has(mapping.argument)) return invalid('invalid_parameters', `${field}.argument: ${mapping.argument} is not a property of input_schema`, `${field}.argument`);
    if (mapping.name === null) {
      if (mapping.in !== 'body') return invalid('invalid_parameters', `${field}.name: only a body argument may leave out its name (it is then the whole body)`, `${field}.name`);
      wholeBody = true;
    } else {
      if (mapping.name.length === 0 || mapping.name.length > 100 || /[\u0000-\u001f\u007f]/.test(mapping.name)) return invalid('invalid_parameters', `${field}.name: expected 1 to 100 characters`, `${field}.name`);
      if (mapping.in === 'header') {
        const problem = headerNameProblem(mapping.name, `${field}.name`);
        if (problem) return problem;
      }
      if (mapping.in === 'body') bodyProperties = true;
      const target = `${mapping.in}:${mapping.in === 'header' ? mapping.name.toLowerCase() : mapping.name}`;
      if (targets.has(target)) return invalid('invalid_parameters', `${field}.name: two arguments go to the ${mapping.in} ${mapping.name}`, `${field}.name`);
      targets.add(target);
    }
  }
  if (wholeBody && (bodyProperties || parameters.filter((mapping) => mapping.in === 'body').length > 1)) {
    return invalid('invalid_parameters', 'parameters: an argument sent as the whole body leaves no room for other body arguments', 'parameters');
  }
  for (const placeholder of pathPlaceholders(path)) {
    if (!targets.has(`path:${placeholder}`)) return invalid('invalid_parameters', `parameters: the path placeholder {${placeholder}} has no argument mapped to it`, 'parameters');
  }
  for (const target of targets) {
    const [location, ...rest] = target.split(':');
    if (location === 'path' && !pathPlaceholders(path).includes(rest.join(':'))) return invalid('invalid_parameters', `parameters: the path has no placeholder {${rest.join(':')}}`, 'parameters');
  }
  return null;
}

/** The first problem with a definition (besides the validity of its schema), naming the field; null when it is fine. */
export function toolDefinitionProblem(definition: ToolDefinition): DomainError | null {
  if (!TOOL_NAME_PATTERN.test(definition.name)) return invalid('invalid_name', 'name: expected 1 to 64 letters, digits, _ or -, starting with a letter (the model calls the tool by it)', 'name');
  const description = textProblem('description', definition.description, { min: 0, max: TOOL_DESCRIPTION_MAX_LENGTH, multiline: true });
  if (description) return description;
  const path = pathProblem(definition.path);
  if (path) return path;
  if (definition.input_schema.type !== 'object') return invalid('invalid_input_schema', 'input_schema: expected a JSON Schema of type object (the arguments are an object)', 'input_schema');
  if (Buffer.byteLength(JSON.stringify(definition.input_schema)) > MAX_INPUT_SCHEMA_BYTES) return invalid('invalid_input_schema', `input_schema: at most ${MAX_INPUT_SCHEMA_BYTES} bytes of JSON`, 'input_schema');
  return parametersProblem(definition);
}

const toolNotFound = (): DomainError => notFound('tool_not_found', 'no such tool');

/** JSON with object keys sorted: a schema whose keys come in another order is the same schema. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, field]) => field !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const same = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** A definition as it is stored: the description in its stored text form. */
export function normalizedDefinition(definition: ToolDefinition): ToolDefinition {
  return { ...definition, description: normalizeText(definition.description) };
}

/** The fields whose values differ between two definitions. */
export function changedFields(before: ToolDefinition, after: ToolDefinition): ToolField[] {
  return TOOL_FIELDS.filter((field) => !same(before[field], after[field]));
}

/** The definition after a person's change: an absent (or undefined) field keeps its value. */
export function editedDefinition(current: ToolDefinition, changes: Partial<ToolDefinition>): ToolDefinition {
  return normalizedDefinition({ ...current, ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) });
}

/**
 * The imported fields whose values differ from the definition as last imported: a person's
 * local edits. Only what an import describes can be an edit of it, and an edit changed back to
 * the imported value is no edit any more (the next reimport may update that field again).
 */
export function editedFieldsOf(definition: ToolDefinition, origin: ToolOrigin | null): ToolField[] {
  if (origin === null) return [];
  const imported = normalizedDefinition(origin.imported);
  return IMPORTED_FIELDS.filter((field) => !same(definition[field], imported[field]));
}

function decideEdit(current: LiveTool, changes: Partial<ToolDefinition>, now: Date): Either<DomainError, ToolEvent[]> {
  const next = editedDefinition(current.definition, changes);
  const problem = toolDefinitionProblem(next);
  if (problem) return left(problem);
  const changed = changedFields(current.definition, next);
  if (changed.length === 0) return right([]);
  const { tenant_id, workspace_id, tool_id, origin } = current;
  return right([
    { type: 'ToolUpdated', data: { tenant_id, workspace_id, tool_id, definition: next, changed, cause: 'edit', origin, edited_fields: editedFieldsOf(next, origin), updated_at: now.toISOString() } },
  ]);
}

/**
 * The definition after a reimport: each imported field takes the new import's value, except
 * those a person edited (unless `overwrite_edits`); `chat`, `risk` and `enabled` stay.
 */
export function reimportedDefinition(current: Pick<LiveTool, 'definition' | 'edited_fields'>, imported: ToolDefinition, overwriteEdits: boolean): ToolDefinition {
  const kept = overwriteEdits ? [] : current.edited_fields;
  const fresh = normalizedDefinition(imported);
  const next: ToolDefinition = { ...current.definition };
  for (const field of IMPORTED_FIELDS) {
    if (!kept.includes(field)) Object.assign(next, { [field]: fresh[field] });
  }
  return next;
}

function decideReimport(current: LiveTool, data: Extract<ToolCommand, { type: 'ReimportTool' }>['data'], now: Date): Either<DomainError, ToolEvent[]> {
  if (current.origin === null) return left(conflict('tool_not_imported', 'the tool was not imported from an OpenAPI document'));
  const imported = normalizedDefinition(data.imported);
  const next = reimportedDefinition(current, imported, data.overwrite_edits);
  const problem = toolDefinitionProblem(next);
  if (problem) return left(problem);
  const origin: ToolOrigin = { operation_key: data.operation_key, imported, imported_at: now.toISOString() };
  const changed = changedFields(current.definition, next);
  if (changed.length === 0 && same(origin.imported, current.origin.imported) && origin.operation_key === current.origin.operation_key) return right([]);
  const { tenant_id, workspace_id, tool_id } = current;
  return right([
    { type: 'ToolUpdated', data: { tenant_id, workspace_id, tool_id, definition: next, changed, cause: 'reimport', origin, edited_fields: editedFieldsOf(next, origin), updated_at: now.toISOString() } },
  ]);
}

export const toolDecider: Decider<ToolCommand, ToolEvent, ToolState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ToolCreated': {
        const { tenant_id, workspace_id, tool_id, target, source, definition, origin } = event.data;
        return { status: 'active', tenant_id, workspace_id, tool_id, target, source, definition, origin, edited_fields: [] };
      }
      case 'ToolUpdated':
        if (state.status !== 'active') return state;
        return { ...state, definition: event.data.definition, origin: event.data.origin, edited_fields: event.data.edited_fields as ToolField[] };
      case 'ToolDeleted':
        return { status: 'deleted', tenant_id: event.data.tenant_id };
    }
  },

  decide(command, state, { now }): Either<DomainError, ToolEvent[]> {
    if (command.type === 'CreateTool') {
      if (state.status !== 'absent') return left(conflict('tool_exists', 'the tool already exists'));
      const { tenant_id, workspace_id, tool_id, target, source, origin } = command.data;
      const definition = normalizedDefinition(command.data.definition);
      const problem = toolDefinitionProblem(definition);
      if (problem) return left(problem);
      if ((source === 'sdk') !== (target.kind === 'sdk_connection')) return left(invalid('invalid_target', 'a tool of an SDK connection has source sdk, and only it', 'source'));
      if ((source === 'openapi') !== (origin !== null)) return left(invalid('invalid_origin', 'an imported tool keeps its origin, and only it', 'origin'));
      return right([{ type: 'ToolCreated', data: { tenant_id, workspace_id, tool_id, target, source, definition, origin, created_at: now.toISOString() } }]);
    }
    if (state.status !== 'active' || state.tenant_id !== command.data.tenant_id) return left(toolNotFound());
    switch (command.type) {
      case 'EditTool':
        return decideEdit(state, command.data.changes, now);
      case 'ReimportTool':
        return decideReimport(state, command.data, now);
      case 'DeleteTool': {
        const { tenant_id, workspace_id, tool_id } = state;
        return right([{ type: 'ToolDeleted', data: { tenant_id, workspace_id, tool_id, name: state.definition.name, deleted_at: now.toISOString() } }]);
      }
    }
  },
};
