// The integration aggregate (spec 4.12, issue #12 point 1): a tenant's own API that the
// assistant's business tools call, per workspace. Stream `integration-<id>`.
//
// - It holds the API's name, base URL, how the platform authenticates there, and the headers
//   sent with every call. The one secret of the auth kind (the API key's value, the bearer
//   token, the basic password, the OAuth2 client secret) only ever enters an event sealed
//   (`credentials_sealed`); readers learn whether there is one, never what it is.
// - The application checks whether the platform may call the base URL and the token URL at
//   all (the outbound guard, which depends on the deployment and on name resolution); this
//   checks their form, the auth and the headers.
// - An integration whose tools were imported from an OpenAPI document remembers that document
//   (`IntegrationOpenApiImported`: its URL, or null for an upload, and its SHA-256), so a
//   reimport can fetch it again and tell whether it changed.
// - Every command names the caller's tenant: another tenant's integration answers
//   `integration_not_found` exactly as a missing one does.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { endpointUrlProblem } from '../shared/endpoint-url';
import { type TextRules, normalizeText, textProblem } from '../shared/text';

export const INTEGRATION_NAME_MAX_LENGTH = 100;
export const MAX_DEFAULT_HEADERS = 20;
export const MAX_HEADER_VALUE_LENGTH = 1000;
export const MAX_CREDENTIALS_LENGTH = 4096;
export const MAX_SCOPES = 50;
const NAME_RULES: TextRules = { max: INTEGRATION_NAME_MAX_LENGTH };

export const AUTH_KINDS = ['none', 'api_key', 'bearer', 'basic', 'oauth2_client_credentials'] as const;
export type AuthKind = (typeof AUTH_KINDS)[number];

/** How the platform authenticates at the API; the secret itself is never part of it. */
export const IntegrationAuth = t.union(
  [
    t.type({ kind: t.literal('none') }),
    t.type({ kind: t.literal('api_key'), in: t.keyof({ header: null, query: null }), name: t.string }),
    t.type({ kind: t.literal('bearer') }),
    t.type({ kind: t.literal('basic'), username: t.string }),
    t.type({ kind: t.literal('oauth2_client_credentials'), token_url: t.string, client_id: t.string, scopes: t.array(t.string) }),
  ],
  'IntegrationAuth',
);
export type IntegrationAuth = t.TypeOf<typeof IntegrationAuth>;

/** Header name -> value, sent with every call of the integration's tools. */
export const DefaultHeaders = t.record(t.string, t.string);
export type DefaultHeaders = t.TypeOf<typeof DefaultHeaders>;

/** What a change did to the credentials. */
export const CredentialsChange = t.keyof({ kept: null, given: null, removed: null, none: null });

const Sealed = t.union([t.string, t.null]);

export const IntegrationCreated = declareEvent(
  'IntegrationCreated',
  t.type({
    tenant_id: t.string,
    workspace_id: t.string,
    integration_id: t.string,
    name: t.string,
    base_url: t.string,
    auth: IntegrationAuth,
    /** The secret of the auth kind, sealed; null when there is none. */
    credentials_sealed: Sealed,
    default_headers: DefaultHeaders,
    created_at: t.string,
  }),
);
export const IntegrationUpdated = declareEvent(
  'IntegrationUpdated',
  t.type({
    tenant_id: t.string,
    workspace_id: t.string,
    integration_id: t.string,
    name: t.string,
    base_url: t.string,
    auth: IntegrationAuth,
    credentials_sealed: Sealed,
    credentials_change: CredentialsChange,
    default_headers: DefaultHeaders,
    updated_at: t.string,
  }),
);
export const IntegrationDeleted = declareEvent(
  'IntegrationDeleted',
  t.type({ tenant_id: t.string, workspace_id: t.string, integration_id: t.string, name: t.string, deleted_at: t.string }),
);

/** Where the integration's imported tools came from: the OpenAPI document's URL (null for an upload) and its SHA-256, as last imported. */
export const OpenApiSource = t.type({ url: t.union([t.string, t.null]), sha256: t.string, api_version: t.string, imported_at: t.string });
export type OpenApiSource = t.TypeOf<typeof OpenApiSource>;

/** Tools were imported from (or reimported against) an OpenAPI document; a reimport without a document fetches `source.url` again. */
export const IntegrationOpenApiImported = declareEvent(
  'IntegrationOpenApiImported',
  t.type({ tenant_id: t.string, workspace_id: t.string, integration_id: t.string, source: OpenApiSource }),
);

export const integrationEvents = eventGroup('integration', [IntegrationCreated, IntegrationUpdated, IntegrationDeleted, IntegrationOpenApiImported]);
export type IntegrationEvent = GroupEvent<typeof integrationEvents>;

/** The credentials after a change: a sealed new secret, removed, or kept as they are. */
export type CredentialsChoice = { kind: 'given'; sealed: string } | { kind: 'remove' } | { kind: 'keep' };

export interface IntegrationFields {
  name: string;
  base_url: string;
  auth: IntegrationAuth;
  default_headers: DefaultHeaders;
}

export type IntegrationCommand =
  | { type: 'CreateIntegration'; data: { tenant_id: string; workspace_id: string; integration_id: string; credentials: CredentialsChoice } & IntegrationFields }
  /** An absent field keeps its value. */
  | { type: 'UpdateIntegration'; data: { tenant_id: string; credentials: CredentialsChoice } & Partial<IntegrationFields> }
  | { type: 'DeleteIntegration'; data: { tenant_id: string } }
  /** Remembers the OpenAPI document the integration's tools were (re)imported from. */
  | { type: 'RecordOpenApiImport'; data: { tenant_id: string; source: Omit<OpenApiSource, 'imported_at'> } };

export type IntegrationState =
  | { status: 'absent' }
  | ({ status: 'active'; tenant_id: string; workspace_id: string; integration_id: string; credentials_sealed: string | null; openapi_source: OpenApiSource | null } & IntegrationFields)
  | { status: 'deleted'; tenant_id: string };

type ActiveIntegration = Extract<IntegrationState, { status: 'active' }>;

export const integrationStream = (integrationId: string): string => toStreamName(integrationEvents.category, integrationId);

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** A header value without control characters (no CR or LF to split a request with). */
const HEADER_VALUE = /^[\x20-\x7e\u0080-\uffff]*$/;
const QUERY_NAME = /^[A-Za-z0-9_.~-]{1,100}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;
const NO_CONTROLS = /^[^\x00-\x1f\x7f]+$/;
/**
 * Headers the platform sets itself or must not be told: the transport's own, the end user's
 * token and session (forwarded per chat turn), and Authorization and cookies, whose values
 * are credentials and belong in `auth`, where they are sealed.
 */
export const RESERVED_HEADERS = ['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'authorization', 'cookie', 'x-end-user-token', 'x-end-user-session'];

/** Why a secret given for the credentials is refused, or null: 1 to 4096 characters without control characters. */
export function credentialsProblem(credentials: string): DomainError | null {
  if (credentials.length === 0 || credentials.length > MAX_CREDENTIALS_LENGTH) return invalid('invalid_credentials', `credentials: expected 1 to ${MAX_CREDENTIALS_LENGTH} characters (null removes them)`, 'credentials');
  if (!NO_CONTROLS.test(credentials)) return invalid('invalid_credentials', 'credentials: control characters are refused', 'credentials');
  return null;
}

export function headerNameProblem(name: string, field: string): DomainError | null {
  if (!HEADER_NAME.test(name)) return invalid('invalid_header', `${field}: expected a header name of 1 to 100 letters, digits and !#$%&'*+.^_\`|~-`, field);
  if (RESERVED_HEADERS.includes(name.toLowerCase())) return invalid('reserved_header', `${field}: ${name} is set by the platform or is a credential (put credentials in auth)`, field);
  return null;
}

export function authProblem(auth: IntegrationAuth): DomainError | null {
  switch (auth.kind) {
    case 'none':
    case 'bearer':
      return null;
    case 'api_key':
      return auth.in === 'header'
        ? headerNameProblem(auth.name, 'auth.name')
        : QUERY_NAME.test(auth.name)
          ? null
          : invalid('invalid_auth', 'auth.name: expected a query parameter name of 1 to 100 letters, digits and _ . ~ -', 'auth.name');
    case 'basic':
      return auth.username.length >= 1 && auth.username.length <= 200 && NO_CONTROLS.test(auth.username) && !auth.username.includes(':')
        ? null
        : invalid('invalid_auth', 'auth.username: expected 1 to 200 characters without a colon or control characters', 'auth.username');
    case 'oauth2_client_credentials': {
      const problem = endpointUrlProblem(auth.token_url, 'auth.token_url');
      if (problem) return problem;
      if (auth.client_id.length > 200 || !PRINTABLE.test(auth.client_id)) return invalid('invalid_auth', 'auth.client_id: expected 1 to 200 printable characters without spaces', 'auth.client_id');
      if (auth.scopes.length > MAX_SCOPES) return invalid('invalid_auth', `auth.scopes: at most ${MAX_SCOPES} scopes`, 'auth.scopes');
      for (const [index, scope] of auth.scopes.entries()) {
        if (scope.length > 200 || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope)) return invalid('invalid_auth', `auth.scopes.${index}: expected an OAuth2 scope (1 to 200 printable characters, no spaces, quotes or backslashes)`, `auth.scopes.${index}`);
      }
      return null;
    }
  }
}

export function defaultHeadersProblem(headers: DefaultHeaders): DomainError | null {
  const names = Object.keys(headers);
  if (names.length > MAX_DEFAULT_HEADERS) return invalid('invalid_header', `default_headers: at most ${MAX_DEFAULT_HEADERS} headers`, 'default_headers');
  const seen = new Set<string>();
  for (const name of names) {
    const field = `default_headers.${name}`;
    const problem = headerNameProblem(name, field);
    if (problem) return problem;
    if (seen.has(name.toLowerCase())) return invalid('invalid_header', `${field}: the header is given twice (header names ignore case)`, field);
    seen.add(name.toLowerCase());
    const value = headers[name];
    if (value.length > MAX_HEADER_VALUE_LENGTH || !HEADER_VALUE.test(value)) return invalid('invalid_header', `${field}: expected a value of at most ${MAX_HEADER_VALUE_LENGTH} characters without control characters`, field);
  }
  return null;
}

/** The first problem with the fields given, naming it; null when they are fine. */
export function integrationFieldsProblem(fields: Partial<IntegrationFields>): DomainError | null {
  if (fields.name !== undefined) {
    const problem = textProblem('name', fields.name, NAME_RULES);
    if (problem) return problem;
  }
  return (
    (fields.base_url === undefined ? null : endpointUrlProblem(fields.base_url, 'base_url')) ??
    (fields.auth === undefined ? null : authProblem(fields.auth)) ??
    (fields.default_headers === undefined ? null : defaultHeadersProblem(fields.default_headers))
  );
}

const integrationNotFound = (): DomainError => notFound('integration_not_found', 'no such integration');
const noSecretForNone = (): DomainError => invalid('invalid_credentials', 'credentials: an integration without auth (kind none) takes no credentials', 'credentials');

const sameAuth = (a: IntegrationAuth, b: IntegrationAuth): boolean => JSON.stringify(a) === JSON.stringify(b);
const sameHeaders = (a: DefaultHeaders, b: DefaultHeaders): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
};

function decideUpdate(current: ActiveIntegration, data: Extract<IntegrationCommand, { type: 'UpdateIntegration' }>['data'], now: Date): Either<DomainError, IntegrationEvent[]> {
  const problem = integrationFieldsProblem(data);
  if (problem) return left(problem);
  const name = data.name === undefined ? current.name : normalizeText(data.name);
  const base_url = data.base_url ?? current.base_url;
  const auth = data.auth ?? current.auth;
  const default_headers = data.default_headers ?? current.default_headers;
  const held = current.credentials_sealed;
  const { credentials } = data;
  if (auth.kind === 'none' && credentials.kind === 'given') return left(noSecretForNone());
  // A secret of one auth kind is no secret of another (an API key is not a password).
  if (auth.kind !== current.auth.kind && auth.kind !== 'none' && credentials.kind === 'keep' && held !== null) {
    return left(invalid('credentials_required', 'credentials: a new auth kind needs its own credentials (or null for none)', 'credentials'));
  }
  const next =
    credentials.kind === 'given'
      ? { sealed: credentials.sealed, change: 'given' as const }
      : credentials.kind === 'remove' || auth.kind === 'none'
        ? { sealed: null, change: held === null ? ('none' as const) : ('removed' as const) }
        : { sealed: held, change: held === null ? ('none' as const) : ('kept' as const) };
  const unchanged =
    credentials.kind !== 'given' && next.sealed === held && name === current.name && base_url === current.base_url && sameAuth(auth, current.auth) && sameHeaders(default_headers, current.default_headers);
  if (unchanged) return right([]);
  const { tenant_id, workspace_id, integration_id } = current;
  return right([
    {
      type: 'IntegrationUpdated',
      data: { tenant_id, workspace_id, integration_id, name, base_url, auth, credentials_sealed: next.sealed, credentials_change: next.change, default_headers, updated_at: now.toISOString() },
    },
  ]);
}

export const integrationDecider: Decider<IntegrationCommand, IntegrationEvent, IntegrationState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'IntegrationCreated':
      case 'IntegrationUpdated': {
        const { tenant_id, workspace_id, integration_id, name, base_url, auth, credentials_sealed, default_headers } = event.data;
        const openapi_source = state.status === 'active' ? state.openapi_source : null;
        return { status: 'active', tenant_id, workspace_id, integration_id, name, base_url, auth, credentials_sealed, default_headers, openapi_source };
      }
      case 'IntegrationOpenApiImported':
        return state.status === 'active' ? { ...state, openapi_source: event.data.source } : state;
      case 'IntegrationDeleted':
        return { status: 'deleted', tenant_id: event.data.tenant_id };
    }
  },

  decide(command, state, { now }): Either<DomainError, IntegrationEvent[]> {
    if (command.type === 'CreateIntegration') {
      if (state.status !== 'absent') return left(conflict('integration_exists', 'the integration already exists'));
      const { tenant_id, workspace_id, integration_id, name, base_url, auth, default_headers, credentials } = command.data;
      const problem = integrationFieldsProblem(command.data);
      if (problem) return left(problem);
      if (auth.kind === 'none' && credentials.kind === 'given') return left(noSecretForNone());
      const credentials_sealed = credentials.kind === 'given' ? credentials.sealed : null;
      return right([
        {
          type: 'IntegrationCreated',
          data: { tenant_id, workspace_id, integration_id, name: normalizeText(name), base_url, auth, credentials_sealed, default_headers, created_at: now.toISOString() },
        },
      ]);
    }
    if (state.status !== 'active' || state.tenant_id !== command.data.tenant_id) return left(integrationNotFound());
    switch (command.type) {
      case 'UpdateIntegration':
        return decideUpdate(state, command.data, now);
      case 'DeleteIntegration': {
        const { tenant_id, workspace_id, integration_id, name } = state;
        return right([{ type: 'IntegrationDeleted', data: { tenant_id, workspace_id, integration_id, name, deleted_at: now.toISOString() } }]);
      }
      case 'RecordOpenApiImport': {
        const { tenant_id, workspace_id, integration_id } = state;
        return right([{ type: 'IntegrationOpenApiImported', data: { tenant_id, workspace_id, integration_id, source: { ...command.data.source, imported_at: now.toISOString() } } }]);
      }
    }
  },
};
