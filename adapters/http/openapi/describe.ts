// The vocabulary in which each router area describes its routes for the OpenAPI document
// (openapi/document.ts builds the document from them). A route reads as what a client needs:
// who may call it, its query and body, its success answer and the error statuses it can give;
// the statuses every route of a kind shares (401 with a token, 400/413/415 with a JSON body)
// are added by the document, so an area lists only its own.

import * as t from 'io-ts';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { CLOSED_OBJECTS } from '../decode';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses it). */
export type Schema = { [keyword: string]: unknown };

/**
 * Who may call a route: no credential, a user token (optionally of a minimum role), the
 * super admin's token, the metrics token, a user token where one is optional, the
 * connector-manager's token, a tenant's widget token (the widget's routes), or either a user
 * token or a widget token.
 */
export type Access = 'public' | 'user' | 'admin_token' | 'metrics_token' | 'optional_user' | 'connector_manager_token' | 'widget_token' | 'user_or_widget_token';

/** `options`: a CORS preflight answered by a route of its own (the widget's). */
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options';

/** Error statuses a route can answer with `{code, message, field?}`. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 410 | 412 | 413 | 415 | 422 | 429 | 502 | 503;

export interface QueryParameter {
  name: string;
  description: string;
  schema: Schema;
  required?: boolean;
}

export type RequestBody =
  | { json: Schema; description?: string }
  | { multipart: Schema; description?: string }
  /** An HTML form's fields (`application/x-www-form-urlencoded`). */
  | { form: Schema; description?: string }
  | { raw: readonly string[]; description?: string };

export interface SuccessAnswer {
  /** 303: a page's form answered by sending the browser on (`Location`). */
  status: 200 | 201 | 202 | 204 | 303;
  description: string;
  /** The JSON body (absent for 204). */
  json?: Schema;
  /** Another media type and its schema (text, NDJSON, HTML); several when the answer is one of them (a document's own type); beside `json` when the client chooses by Accept. */
  content?: { type: string | readonly string[]; schema: Schema };
  headers?: Record<string, { description: string; schema: Schema }>;
}

export interface RouteDescription {
  summary: string;
  description?: string;
  access: Access;
  /** The least role a user token needs; adds 403. */
  role?: 'member' | 'admin' | 'owner';
  query?: readonly QueryParameter[];
  /** Request headers the route reads besides the credential (X-End-User-Token ...). */
  headers?: readonly QueryParameter[];
  body?: RequestBody;
  success: SuccessAnswer;
  /** Further statuses this route answers (those of `access` and `body` are added). */
  errors?: readonly ErrorStatus[];
  /** A creating route that honours `Idempotency-Key` (middleware/idempotency.ts); adds the header, 409 and 422. */
  idempotent?: boolean;
  /**
   * The resource's version travels as an `ETag` (entity-tags.ts): `read` answers it;
   * `conditional` also takes `If-Match` (412 when another write came first).
   */
  versioned?: 'read' | 'conditional';
  /** Other answers that are not `{code, message}` (a GraphQL error body, a 503 readiness). */
  otherAnswers?: Record<string, { description: string; json?: Schema; content?: { type: string; schema: Schema }; headers?: SuccessAnswer['headers'] }>;
}

/** One router area: its tag, its routes by OpenAPI path (`/api/v1/org/teams/{id}`), its schemas. */
export interface ApiArea {
  tag: string;
  /** The tag's description; areas sharing a tag give it once. */
  description?: string;
  routes: Record<string, Partial<Record<Method, RouteDescription>>>;
  schemas?: Record<string, Schema>;
}

// ------------------------------------------------------------------------- schema helpers

export const ref = (schema: string): Schema => ({ $ref: `#/components/schemas/${schema}` });

export const string = (description?: string): Schema => (description ? { type: 'string', description } : { type: 'string' });
export const dateTime = (description?: string): Schema => ({ type: 'string', format: 'date-time', ...(description ? { description } : {}) });
export const integer = (description?: string): Schema => ({ type: 'integer', ...(description ? { description } : {}) });
export const boolean = (description?: string): Schema => ({ type: 'boolean', ...(description ? { description } : {}) });
export const enumOf = (values: readonly string[], description?: string): Schema => ({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
export const arrayOf = (items: Schema, description?: string): Schema => ({ type: 'array', items, ...(description ? { description } : {}) });
export const nullable = (schema: Schema): Schema =>
  typeof schema.type === 'string' && schema.$ref === undefined ? { ...schema, type: [schema.type, 'null'] } : { anyOf: [schema, { type: 'null' }] };

/** An object whose listed properties are all present (the shape of every answer we send). */
export function object(properties: Record<string, Schema>, description?: string): Schema {
  return { type: 'object', properties, required: Object.keys(properties), ...(description ? { description } : {}) };
}

/** One page of a list route: `{items, next_cursor}` (adapters/http/pagination.ts). */
export const page = (item: Schema): Schema =>
  object({ items: arrayOf(item), next_cursor: { type: ['string', 'null'], description: 'pass as `cursor` for the next page; null on the last page' } });

/** `{items}` of a list that is never paged. */
export const list = (item: Schema): Schema => object({ items: arrayOf(item) });

/** `?limit=&cursor=` of every list route. */
export const PAGE_PARAMETERS: readonly QueryParameter[] = [
  { name: 'limit', description: 'items per page, 1 to 1000 (default 50); anything else is 400 `invalid_limit`', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 50 } },
  { name: 'cursor', description: 'the `next_cursor` of the previous page; a foreign one is 400 `invalid_cursor`', schema: { type: 'string', minLength: 1 } },
];

// ---------------------------------------------------------------- request bodies from io-ts

/** JSON Schema fragments for refinements whose predicate JSON Schema can state. */
const KNOWN_REFINEMENTS = new Map<t.Mixed, Schema>([[NonEmptyTrimmed, { type: 'string', minLength: 1, description: 'non-empty, without surrounding spaces' }]]);

const acceptsUndefined = (codec: t.Mixed): boolean => codec.is(undefined);

/**
 * The JSON Schema of a request-body codec, so that the document states exactly what the
 * router decodes: properties, which are required, enums, nesting. A refinement keeps its
 * base type and reads its name as the description ("string of 1 to 100 characters").
 */
export function schemaOfCodec(codec: t.Mixed): Schema {
  const known = KNOWN_REFINEMENTS.get(codec);
  if (known) return known;
  if (codec instanceof t.StringType) return { type: 'string' };
  if (codec instanceof t.NumberType) return { type: 'number' };
  if (codec instanceof t.BooleanType) return { type: 'boolean' };
  if (codec instanceof t.NullType) return { type: 'null' };
  if (codec instanceof t.UnknownType) return {};
  if (codec === t.UnknownRecord) return { type: 'object' };
  if (codec instanceof t.LiteralType) return { const: codec.value };
  if (codec instanceof t.KeyofType) return { type: 'string', enum: Object.keys(codec.keys) };
  if (codec instanceof t.RefinementType) return { ...schemaOfCodec(codec.type), description: codec.name };
  if (codec instanceof t.ExactType) return CLOSED_OBJECTS.has(codec) ? { ...schemaOfCodec(codec.type), additionalProperties: false } : schemaOfCodec(codec.type);
  if (codec instanceof t.ArrayType || codec instanceof t.ReadonlyArrayType) return { type: 'array', items: schemaOfCodec(codec.type) };
  if (codec instanceof t.DictionaryType) return { type: 'object', additionalProperties: schemaOfCodec(codec.codomain) };
  if (codec instanceof t.IntersectionType) return { allOf: (codec.types as t.Mixed[]).map(schemaOfCodec) };
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType) {
    const props = codec.props as Record<string, t.Mixed>;
    const properties = Object.fromEntries(Object.entries(props).map(([name, prop]) => [name, schemaOfCodec(prop)]));
    const required = codec instanceof t.InterfaceType ? Object.keys(props).filter((name) => !acceptsUndefined(props[name])) : [];
    return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
  }
  if (codec instanceof t.UnionType) {
    // `undefined` in a union only makes its property optional (see `required` above).
    const members = (codec.types as t.Mixed[]).filter((member) => !(member instanceof t.UndefinedType || member instanceof t.VoidType)).map(schemaOfCodec);
    if (members.length === 1) return members[0];
    const simpleTypes = members.every((member) => Object.keys(member).length === 1 && typeof member.type === 'string');
    return simpleTypes ? { type: members.map((member) => member.type) } : { anyOf: members };
  }
  throw new Error(`schemaOfCodec: no JSON Schema for the codec ${codec.name}; describe this body by hand`);
}
