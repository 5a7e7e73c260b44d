// What an OpenAPI document proposes to import (spec 4.12, issue #12 point 2): an integration
// (its name, base URL and auth) and one business tool per operation.
//
// - Each operation is keyed by its `operationId`, or `METHOD /path` without one: the key a
//   reimport matches tools by.
// - The tool's name is the operationId made fit for a model (`^[A-Za-z][A-Za-z0-9_-]{0,63}$`),
//   or `method_path` (`get_pets_petId`); unique without case among the names given out and
//   the names the workspace already uses (`_2`, `_3`, ...). Its description is the summary
//   and description, at most 1024 characters.
// - Its input schema is one JSON Schema object built from the path, query and header
//   parameters and the JSON body: a body object's properties become arguments of their own
//   (sent as the body's properties), any other body is one argument `body` sent as the whole
//   body. Path parameters are always required. `additionalProperties: false`: an argument the
//   operation does not take is refused when the tool is called, not silently dropped.
// - What a tool cannot do skips the operation, with the reason: a body that is not JSON and
//   is required (file uploads, forms), a required cookie or reserved header, a method other
//   than GET, POST, PUT, PATCH and DELETE, a schema that expands past the bounds, a
//   definition the tool aggregate refuses. Optional parts a tool cannot send are left out,
//   with a note on the operation.
// - The integration's auth is guessed from the security schemes (the first one the document
//   requires, else the first declared), never with a credential: API key in a header or the
//   query, HTTP bearer, HTTP basic, OAuth2 client credentials (token URL and scopes). What
//   only a person knows (the basic user name, the OAuth2 client id) is left empty for them
//   to fill in; a scheme the platform does not speak is `none` with a note.

import { type DefaultHeaders, type IntegrationAuth, INTEGRATION_NAME_MAX_LENGTH, headerNameProblem } from '../../domain/integration/integration';
import { characterCount } from '../../domain/shared/text';
import {
  HTTP_METHODS,
  type HttpMethod,
  MAX_INPUT_SCHEMA_BYTES,
  type ParameterMapping,
  type RiskTier,
  TOOL_DESCRIPTION_MAX_LENGTH,
  type ToolDefinition,
  toolDefinitionProblem,
} from '../../domain/tool/tool';
import { inputSchemaProblem } from '../tool/input-schema';
import type { OpenApiDocument } from './openapi-document';
import { type JsonSchema, MAX_SCHEMA_NODES, type SchemaConversion, SchemaTooLargeError, isPlainObject, jsonSchemaOf } from './openapi-schema';

/** Operations one import takes at most; the rest are listed as skipped. */
export const MAX_IMPORTED_OPERATIONS = 500;

/** One operation as a proposed tool. */
export interface ProposedOperation {
  operation_key: string;
  name: string;
  description: string;
  method: HttpMethod;
  path: string;
  parameters: ParameterMapping[];
  input_schema: Record<string, unknown>;
  /** The default risk tier: `read` for GET, `write` otherwise. */
  risk: RiskTier;
  /** What of the operation the tool leaves out, and why. */
  notes: string[];
}

export interface SkippedOperation {
  operation_key: string;
  method: string;
  path: string;
  reason: string;
}

export interface ProposedIntegration {
  name: string;
  /** Null when the document names no server the platform can resolve. */
  base_url: string | null;
  auth: IntegrationAuth;
  default_headers: DefaultHeaders;
  notes: string[];
}

export interface ImportProposal {
  document: { openapi: string; title: string; version: string; sha256: string; url: string | null };
  integration: ProposedIntegration;
  operations: ProposedOperation[];
  skipped: SkippedOperation[];
}

export interface ProposalOptions {
  /** Where the document was fetched from: relative server and token URLs resolve against it. */
  url: string | null;
  /** Tool names the workspace uses already (any case). */
  takenNames: Iterable<string>;
  /** Names to keep for operations that already have a tool (a reimport): by operation key. */
  namesByOperation?: ReadonlyMap<string, string>;
}

const DOCUMENT_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const ARGUMENT = /^[A-Za-z0-9_.-]{1,100}$/;
/** Characters the tool aggregate refuses in a description (controls, bidi overrides). */
const UNSHOWABLE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;
/** Headers OpenAPI says a parameter does not describe (they come from the body, `Accept` and auth). */
const IGNORED_HEADERS = ['accept', 'content-type', 'authorization'];

class Skip extends Error {}

const skip = (reason: string): never => {
  throw new Skip(reason);
};

// ---------------------------------------------------------------------------------- names

function cut(text: string, max: number): string {
  return [...text].slice(0, max).join('');
}

/** A tool name from an operationId, or null when nothing of it is usable. */
function nameFromId(operationId: string): string | null {
  let name = operationId.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/_+/g, '_').replace(/^[_-]+|[_-]+$/g, '');
  if (name === '') return null;
  if (!/^[A-Za-z]/.test(name)) name = `op_${name}`;
  return name.slice(0, 64);
}

/** `get_pets_petId` for GET /pets/{petId}. */
function nameFromPath(method: string, path: string): string {
  const words = path
    .split('/')
    .map((segment) => segment.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, ''))
    .filter((segment) => segment !== '');
  return `${method.toLowerCase()}_${words.length === 0 ? 'root' : words.join('_')}`.slice(0, 64);
}

/** Gives out names unique without case, suffixing `_2`, `_3`, ... to fit 64 characters. */
class Names {
  private readonly taken = new Set<string>();

  constructor(taken: Iterable<string>) {
    for (const name of taken) this.taken.add(name.toLowerCase());
  }

  keep(name: string): void {
    this.taken.add(name.toLowerCase());
  }

  /** The first free name from `base` (not yet taken: `keep` it once it is used). */
  free(base: string): string {
    let name = base;
    for (let n = 2; this.taken.has(name.toLowerCase()); n += 1) name = `${base.slice(0, 64 - `_${n}`.length)}_${n}`;
    return name;
  }
}

/** Arguments unique within one tool: a second `id` becomes `query_id`, then `query_id_2`. */
class Arguments {
  private readonly used = new Set<string>();

  has(name: string): boolean {
    return this.used.has(name);
  }

  take(name: string, location: string): string {
    const base = ARGUMENT.test(name) ? name : cut(name.replace(/[^A-Za-z0-9_.-]/g, '_'), 100) || location;
    let argument = this.used.has(base) ? cut(`${location}_${base}`, 100) : base;
    for (let n = 2; this.used.has(argument); n += 1) argument = `${cut(`${location}_${base}`, 95)}_${n}`;
    this.used.add(argument);
    return argument;
  }
}

// ---------------------------------------------------------------------------- operations

function descriptionOf(operation: Record<string, unknown>, method: string, path: string): string {
  const summary = typeof operation.summary === 'string' ? operation.summary.trim() : '';
  const details = typeof operation.description === 'string' ? operation.description.trim() : '';
  const text = summary && details && !details.startsWith(summary) ? `${summary}\n\n${details}` : details || summary || `${method} ${path}`;
  return cut(text.replace(UNSHOWABLE, ' ').normalize('NFC').trim(), TOOL_DESCRIPTION_MAX_LENGTH).trim();
}

interface OperationParameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  deprecated?: boolean;
  schema: unknown;
}

/** The path item's parameters, overridden by the operation's of the same name and place. */
function parametersOf(pathItem: Record<string, unknown>, operation: Record<string, unknown>): OperationParameter[] {
  const byKey = new Map<string, OperationParameter>();
  for (const list of [pathItem.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const parameter of list) {
      if (!isPlainObject(parameter) || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') continue;
      // A parameter may describe its value by a media type instead of a schema.
      const content = isPlainObject(parameter.content) ? Object.values(parameter.content).find(isPlainObject) : undefined;
      byKey.set(`${parameter.in}:${parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name}`, {
        name: parameter.name,
        in: parameter.in,
        required: parameter.in === 'path' || parameter.required === true,
        ...(typeof parameter.description === 'string' ? { description: parameter.description } : {}),
        ...(parameter.deprecated === true ? { deprecated: true } : {}),
        schema: parameter.schema ?? content?.schema ?? {},
      });
    }
  }
  return [...byKey.values()];
}

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/** The request body's JSON schema, or null when the operation takes none (or none a tool can send). */
function jsonBodyOf(operation: Record<string, unknown>, notes: string[]): { schema: unknown; required: boolean } | null {
  const body = operation.requestBody;
  if (!isPlainObject(body) || !isPlainObject(body.content)) return null;
  const types = Object.keys(body.content);
  const json = types.find((type) => type.toLowerCase().split(';')[0].trim() === 'application/json') ?? types.find((type) => JSON_MEDIA_TYPE.test(type));
  const required = body.required === true;
  if (json === undefined) {
    const what = types.some((type) => type.toLowerCase().startsWith('multipart/'))
      ? `multipart (${types.join(', ')}: file uploads)`
      : types.some((type) => type.toLowerCase().startsWith('application/x-www-form-urlencoded'))
        ? 'a form (application/x-www-form-urlencoded)'
        : types.join(', ') || 'of no media type';
    if (required) skip(`its request body is ${what}; a tool sends JSON bodies only`);
    notes.push(`the optional request body (${what}) is left out: a tool sends JSON bodies only`);
    return null;
  }
  const media = body.content[json];
  return { schema: isPlainObject(media) ? (media.schema ?? {}) : {}, required };
}

/** allOf of plain object schemas, merged into one (the usual way of extending a schema). */
function mergedObject(schema: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = schema.allOf;
  const plain = (part: unknown): part is Record<string, unknown> =>
    isPlainObject(part) && !['allOf', 'anyOf', 'oneOf', 'not', 'if'].some((keyword) => keyword in part) && (part.type === undefined || part.type === 'object');
  if (!parts.every(plain)) return schema;
  const { allOf: _allOf, ...rest } = schema;
  const merged: Record<string, unknown> = { ...rest, type: 'object', properties: {}, required: [] };
  for (const part of [rest, ...parts]) {
    if (isPlainObject(part.properties)) Object.assign(merged.properties as object, part.properties);
    if (Array.isArray(part.required)) (merged.required as unknown[]).push(...part.required);
    for (const keyword of ['additionalProperties', 'patternProperties', 'unevaluatedProperties'] as const) if (part[keyword] !== undefined) merged[keyword] = part[keyword];
  }
  merged.required = [...new Set(merged.required as unknown[])];
  return merged;
}

/** Whether a body schema's properties can each be an argument of their own. */
function spreadable(schema: JsonSchema, arguments_: Arguments): schema is Record<string, unknown> & { properties: Record<string, JsonSchema> } {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return false;
  if (schema.type !== undefined && schema.type !== 'object') return false;
  if (['allOf', 'anyOf', 'oneOf', 'not', 'if', 'patternProperties', 'unevaluatedProperties', 'dependentSchemas', 'dependentRequired'].some((keyword) => keyword in schema)) return false;
  // Properties the schema does not name would have no argument to come in.
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) return false;
  const names = Object.keys(schema.properties);
  return names.length > 0 && names.every((name) => ARGUMENT.test(name) && !arguments_.has(name));
}

function withDescription(schema: JsonSchema, parameter: OperationParameter): JsonSchema {
  if (!isPlainObject(schema)) return schema;
  return {
    ...schema,
    ...(parameter.description !== undefined && schema.description === undefined ? { description: parameter.description } : {}),
    ...(parameter.deprecated ? { deprecated: true } : {}),
  };
}

interface OperationContext {
  document: OpenApiDocument;
  path: string;
  method: HttpMethod;
  pathItem: Record<string, unknown>;
  operation: Record<string, unknown>;
  name: string;
}

function proposeOperation(context: OperationContext, operationKey: string): ProposedOperation {
  const { document, path, method, pathItem, operation, name } = context;
  const notes: string[] = [];
  const conversion: SchemaConversion = { dialect: document.dialect, names: document.schemaNames, budget: { nodes: MAX_SCHEMA_NODES } };
  const arguments_ = new Arguments();
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const parameters: ParameterMapping[] = [];
  const add = (argument: string, schema: JsonSchema, mapping: Omit<ParameterMapping, 'argument'>, isRequired: boolean): void => {
    properties[argument] = schema;
    parameters.push({ argument, ...mapping });
    if (isRequired) required.push(argument);
  };
  try {
    for (const parameter of parametersOf(pathItem, operation)) {
      if (parameter.in === 'cookie') {
        if (parameter.required) skip(`it needs the cookie ${parameter.name}; a tool sends no cookies`);
        notes.push(`the optional cookie ${parameter.name} is left out: a tool sends no cookies`);
        continue;
      }
      if (parameter.in === 'header') {
        if (IGNORED_HEADERS.includes(parameter.name.toLowerCase())) {
          notes.push(`the header ${parameter.name} is left out: ${parameter.name.toLowerCase() === 'authorization' ? "the integration's auth sends it" : 'the platform sets it'}`);
          continue;
        }
        const problem = headerNameProblem(parameter.name, 'header');
        if (problem) {
          if (parameter.required) skip(`it needs the header ${parameter.name}, which a tool may not set (${problem.message})`);
          notes.push(`the optional header ${parameter.name} is left out: a tool may not set it`);
          continue;
        }
      }
      if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') skip(`its parameter ${parameter.name} is in "${parameter.in}", which is not a place a tool sends arguments`);
      const argument = arguments_.take(parameter.name, parameter.in);
      add(argument, withDescription(jsonSchemaOf(parameter.schema, conversion), parameter), { in: parameter.in as ParameterMapping['in'], name: parameter.name }, parameter.required);
    }
    const body = jsonBodyOf(operation, notes);
    if (body !== null) {
      const converted = jsonSchemaOf(body.schema, conversion);
      const schema = isPlainObject(converted) ? mergedObject(converted) : converted;
      if (spreadable(schema, arguments_)) {
        const bodyRequired = new Set(Array.isArray(schema.required) ? schema.required : []);
        for (const [property, propertySchema] of Object.entries(schema.properties)) {
          add(arguments_.take(property, 'body'), propertySchema, { in: 'body', name: property }, bodyRequired.has(property));
        }
      } else {
        const argument = arguments_.take(arguments_.has('body') ? 'request_body' : 'body', 'body');
        add(argument, schema, { in: 'body', name: null }, body.required);
      }
    }
  } catch (error) {
    if (error instanceof SchemaTooLargeError) skip(`its schemas expand to more than ${MAX_SCHEMA_NODES} schema objects`);
    throw error;
  }
  const input_schema: Record<string, unknown> = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  if (Buffer.byteLength(JSON.stringify(input_schema)) > MAX_INPUT_SCHEMA_BYTES) skip(`its input schema would be larger than ${MAX_INPUT_SCHEMA_BYTES} bytes`);
  const proposal: ProposedOperation = {
    operation_key: operationKey,
    name,
    description: descriptionOf(operation, method, path),
    method,
    path,
    parameters,
    input_schema,
    risk: method === 'GET' ? 'read' : 'write',
    notes,
  };
  const problem = toolDefinitionProblem(definitionOfProposal(proposal)) ?? inputSchemaProblem(input_schema);
  if (problem) skip(`the tool it would make is refused: ${problem.message}`);
  return proposal;
}

/** The tool definition a proposed operation makes, with the tenant's choices (chat on, enabled, risk as proposed unless given). */
export function definitionOfProposal(operation: ProposedOperation, choices: { name?: string; chat?: boolean; risk?: RiskTier } = {}): ToolDefinition {
  return {
    name: choices.name ?? operation.name,
    description: operation.description,
    method: operation.method,
    path: operation.path,
    parameters: operation.parameters,
    input_schema: operation.input_schema,
    chat: choices.chat ?? true,
    risk: choices.risk ?? operation.risk,
    enabled: true,
  };
}

// --------------------------------------------------------------------------- integration

/** A server URL with its variables' defaults, resolved against the document's URL; null when it cannot be. */
function serverUrl(server: unknown, documentUrl: string | null): string | null {
  if (!isPlainObject(server) || typeof server.url !== 'string') return null;
  const variables = isPlainObject(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^{}]+)\}/g, (whole, name: string) => {
    const variable = variables[name];
    return isPlainObject(variable) && typeof variable.default === 'string' ? variable.default : whole;
  });
  let resolved: URL;
  try {
    resolved = documentUrl === null ? new URL(url) : new URL(url, documentUrl);
  } catch {
    return null;
  }
  if (resolved.protocol !== 'https:' && resolved.protocol !== 'http:') return null;
  resolved.search = '';
  resolved.hash = '';
  return resolved.toString().replace(/\/+$/, '');
}

function baseUrlOf(api: Record<string, unknown>, documentUrl: string | null, notes: string[]): string | null {
  const servers = Array.isArray(api.servers) && api.servers.length > 0 ? api.servers : [{ url: '/' }];
  const url = serverUrl(servers[0], documentUrl);
  if (url === null) notes.push(`base_url: the document's first server (${isPlainObject(servers[0]) ? String(servers[0].url).slice(0, 200) : '?'}) is no absolute URL the platform can resolve; give base_url`);
  return url;
}

function authOf(api: Record<string, unknown>, documentUrl: string | null, notes: string[]): IntegrationAuth {
  const schemes = isPlainObject(api.components) && isPlainObject(api.components.securitySchemes) ? api.components.securitySchemes : {};
  const required = Array.isArray(api.security) ? api.security.flatMap((requirement) => (isPlainObject(requirement) ? Object.keys(requirement) : [])) : [];
  const name = required.find((candidate) => candidate in schemes) ?? Object.keys(schemes)[0];
  if (name === undefined) return { kind: 'none' };
  const scheme = schemes[name];
  const unsupported = (what: string): IntegrationAuth => {
    notes.push(`auth: the security scheme ${name} (${what}) is not one the platform speaks; set auth yourself`);
    return { kind: 'none' };
  };
  if (!isPlainObject(scheme)) return { kind: 'none' };
  switch (scheme.type) {
    case 'apiKey': {
      const keyName = typeof scheme.name === 'string' ? scheme.name : '';
      if (scheme.in === 'query') return { kind: 'api_key', in: 'query', name: keyName };
      if (scheme.in === 'header') {
        if (headerNameProblem(keyName, 'auth.name') === null) return { kind: 'api_key', in: 'header', name: keyName };
        return unsupported(`an API key in the ${keyName} header, which an API key may not use; bearer may fit`);
      }
      return unsupported(`an API key in a ${String(scheme.in)}`);
    }
    case 'http': {
      const kind = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
      if (kind === 'bearer') return { kind: 'bearer' };
      if (kind === 'basic') {
        notes.push('auth.username: the user name of HTTP basic auth is left for you to fill in');
        return { kind: 'basic', username: '' };
      }
      return unsupported(`HTTP ${kind}`);
    }
    case 'oauth2': {
      const flow = isPlainObject(scheme.flows) ? scheme.flows.clientCredentials : undefined;
      if (!isPlainObject(flow) || typeof flow.tokenUrl !== 'string') return unsupported('OAuth2 without the client credentials flow');
      let tokenUrl = flow.tokenUrl;
      try {
        tokenUrl = documentUrl === null ? new URL(flow.tokenUrl).toString() : new URL(flow.tokenUrl, documentUrl).toString();
      } catch {
        notes.push(`auth.token_url: ${flow.tokenUrl.slice(0, 200)} is no absolute URL; give the token URL`);
      }
      notes.push('auth.client_id: the OAuth2 client id is left for you to fill in');
      return { kind: 'oauth2_client_credentials', token_url: tokenUrl, client_id: '', scopes: isPlainObject(flow.scopes) ? Object.keys(flow.scopes) : [] };
    }
    default:
      return unsupported(String(scheme.type));
  }
}

function integrationNameOf(title: string): string {
  const name = cut(title.replace(/[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g, ' ').normalize('NFC').trim(), INTEGRATION_NAME_MAX_LENGTH).trim();
  return characterCount(name) > 0 ? name : 'Imported API';
}

// ------------------------------------------------------------------------------ proposal

/** The integration and the tools a dereferenced OpenAPI document proposes. */
export function proposeImport(document: OpenApiDocument, options: ProposalOptions): ImportProposal {
  const { api } = document;
  const integrationNotes: string[] = [];
  const integration: ProposedIntegration = {
    name: integrationNameOf(document.title),
    base_url: baseUrlOf(api, options.url, integrationNotes),
    auth: authOf(api, options.url, integrationNotes),
    default_headers: {},
    notes: integrationNotes,
  };
  const names = new Names(options.takenNames);
  for (const name of options.namesByOperation?.values() ?? []) names.keep(name);
  const operations: ProposedOperation[] = [];
  const skipped: SkippedOperation[] = [];
  const keys = new Set<string>();
  const paths = isPlainObject(api.paths) ? api.paths : {};
  for (const [path, pathItem] of Object.entries(paths)) {
    if (!isPlainObject(pathItem)) continue;
    for (const documentMethod of DOCUMENT_METHODS) {
      const operation = pathItem[documentMethod];
      if (!isPlainObject(operation)) continue;
      const method = documentMethod.toUpperCase();
      const operationId = typeof operation.operationId === 'string' && operation.operationId.trim() !== '' ? operation.operationId : null;
      const operationKey = operationId ?? `${method} ${path}`;
      const refuse = (reason: string): void => {
        skipped.push({ operation_key: operationKey, method, path, reason });
      };
      if (keys.has(operationKey)) {
        refuse('another operation has the same key (operationId)');
        continue;
      }
      keys.add(operationKey);
      if (!(HTTP_METHODS as readonly string[]).includes(method)) {
        refuse(`${method} is not a method a tool calls (GET, POST, PUT, PATCH, DELETE)`);
        continue;
      }
      if (operations.length >= MAX_IMPORTED_OPERATIONS) {
        refuse(`an import takes at most ${MAX_IMPORTED_OPERATIONS} operations`);
        continue;
      }
      try {
        const name = options.namesByOperation?.get(operationKey) ?? names.free((operationId === null ? null : nameFromId(operationId)) ?? nameFromPath(method, path));
        operations.push(proposeOperation({ document, path, method: method as HttpMethod, pathItem, operation, name }, operationKey));
        names.keep(name);
      } catch (error) {
        if (!(error instanceof Skip)) throw error;
        refuse(error.message);
      }
    }
  }
  return { document: { openapi: document.openapi, title: document.title, version: document.version, sha256: document.sha256, url: options.url }, integration, operations, skipped };
}

