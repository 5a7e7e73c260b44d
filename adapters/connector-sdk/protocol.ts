// The connector protocol's wire shapes (spec 2.2-2.5, 2.3, 7.2) declared once as io-ts
// codecs; the TypeScript types are derived from them. The connector decodes requests with
// these, and any caller (the platform's connector client, the doctor) decodes responses.
//
// Codecs are deliberately open: extra fields are allowed everywhere (io-ts `type` is not
// exact) so a newer peer can add fields without breaking an older one, and optional request
// fields also accept `null`, which some JSON producers send for "absent".
import * as t from 'io-ts';
import { left, type Either } from 'fp-ts/Either';

/** A JSON object with unknown values (arrays and null are not objects here). */
export const JsonObject = t.UnknownRecord;
export type JsonObject = t.TypeOf<typeof JsonObject>;

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

/** The request types of spec 2.2. */
export const ProtocolRequestType = t.keyof({
  ping: null,
  'tools.list': null,
  'capabilities.list': null,
  'tool.invoke': null,
  'tool.resume': null,
});
export type ProtocolRequestType = t.TypeOf<typeof ProtocolRequestType>;

/** The optional fields of a protocol request (spec 2.2). */
export const ProtocolRequestFields = t.partial({
  organization_id: optional(t.string),
  conversation_id: optional(t.string),
  channel: optional(t.string),
  identity: optional(JsonObject),
  tool: optional(t.string),
  parameters: optional(JsonObject),
  authentication: optional(JsonObject),
  resume_token: optional(t.string),
  challenge_response: optional(t.string),
  person: optional(JsonObject),
  platform: optional(JsonObject),
});

/** `ProtocolRequest` (spec 2.2): the JSON body the platform posts to the connector. */
export const ProtocolRequest = t.intersection([
  t.type({
    protocol_version: t.string,
    request_id: t.string,
    type: ProtocolRequestType,
  }),
  ProtocolRequestFields,
]);
export type ProtocolRequest = t.TypeOf<typeof ProtocolRequest>;

/** A tool as advertised on `tools.list` and `capabilities.list` (spec 2.4). */
export const ToolDescriptor = t.intersection([
  t.type({ name: t.string }),
  t.partial({
    description: t.string,
    auth: t.string,
    chat: t.boolean,
    input_schema: JsonObject,
  }),
]);
export type ToolDescriptor = t.TypeOf<typeof ToolDescriptor>;

/** An `{id, label}` entry of organization metadata (spec 2.5). */
export const OrganizationEntry = t.type({ id: t.string, label: t.string });
export type OrganizationEntry = t.TypeOf<typeof OrganizationEntry>;

/** A task of organization metadata; `priority` seen as `high`. */
export const OrganizationTask = t.intersection([OrganizationEntry, t.partial({ priority: t.string })]);
export type OrganizationTask = t.TypeOf<typeof OrganizationTask>;

/** Organization metadata advertised on `capabilities.list` (spec 2.5). */
export const OrganizationMetadata = t.partial({
  version: t.number,
  events: t.array(OrganizationEntry),
  actions: t.array(OrganizationEntry),
  tasks: t.array(OrganizationTask),
});
export type OrganizationMetadata = t.TypeOf<typeof OrganizationMetadata>;

const versions = t.partial({ protocol_version: t.string, sdk_version: t.string });

/** `pong`, the answer to `ping` (the connector's health check). */
export const PongResponse = t.intersection([t.type({ type: t.literal('pong') }), versions]);
export type PongResponse = t.TypeOf<typeof PongResponse>;

/** `tools.list` (legacy): tools only. */
export const ToolsListResponse = t.intersection([
  t.type({ type: t.literal('tools.list'), tools: t.array(ToolDescriptor) }),
  versions,
]);
export type ToolsListResponse = t.TypeOf<typeof ToolsListResponse>;

/** `capabilities.list`: tools plus everything the connector advertises (spec 2.3, 2.5). */
export const CapabilitiesListResponse = t.intersection([
  t.type({ type: t.literal('capabilities.list'), tools: t.array(ToolDescriptor), flows: t.array(JsonObject) }),
  t.partial({
    events: t.array(JsonObject),
    webhooks: t.array(JsonObject),
    schedules: t.array(JsonObject),
    marketing: t.array(JsonObject),
    organization: OrganizationMetadata,
    sdk_name: t.string,
  }),
  versions,
]);
export type CapabilitiesListResponse = t.TypeOf<typeof CapabilitiesListResponse>;

/** `result`: a tool call's success. */
export const ResultResponse = t.intersection([
  t.type({ type: t.literal('result'), output: JsonObject }),
  t.partial({ authentication_context: JsonObject, person_mutations: t.unknown }),
]);
export type ResultResponse = t.TypeOf<typeof ResultResponse>;

/** `challenge`: the tool needs an answer (OTP, confirmation) before it continues via `tool.resume`. */
export const ChallengeResponse = t.type({
  type: t.literal('challenge'),
  resume_token: t.string,
  challenge: JsonObject,
});
export type ChallengeResponse = t.TypeOf<typeof ChallengeResponse>;

/** `error` (spec 7.2); `code` stays an open string so codes added later still decode. */
export const ErrorResponse = t.type({ type: t.literal('error'), code: t.string, message: t.string });
export type ErrorResponse = t.TypeOf<typeof ErrorResponse>;

/** Every JSON body a connector answers with on the protocol path. */
export const ProtocolResponse = t.union([
  PongResponse,
  ToolsListResponse,
  CapabilitiesListResponse,
  ResultResponse,
  ChallengeResponse,
  ErrorResponse,
]);
export type ProtocolResponse = t.TypeOf<typeof ProtocolResponse>;

/** The body of a 404 for a wrong method or path (spec 4.1 rule 1): key `error`, not `type`. */
export const NotFoundBody = t.type({ error: t.literal('not_found') });
export type NotFoundBody = t.TypeOf<typeof NotFoundBody>;

/** Decodes a connector's JSON answer; Left carries the first failing field path. */
export function decodeProtocolResponse(json: unknown): Either<string, ProtocolResponse> {
  const decoded = ProtocolResponse.decode(json);
  return decoded._tag === 'Right' ? decoded : left(firstErrorPath(decoded.left) || '(body)');
}

/** Path of the first field an io-ts decode rejected, e.g. `parameters` or `tools[2].name`. */
export function firstErrorPath(errors: t.Errors): string {
  if (errors.length === 0) return '';
  const context = errors[0].context;
  let path = '';
  for (let index = 1; index < context.length; index++) {
    const parent = context[index - 1].type;
    // Members of unions and intersections are indexed too, but are not fields.
    if (parent instanceof t.UnionType || parent instanceof t.IntersectionType) continue;
    const key = context[index].key;
    if (parent instanceof t.ArrayType) path += `[${key}]`;
    else path += path === '' ? key : `.${key}`;
  }
  return path;
}
