// The OpenAPI 3.1 document of the REST API, built from the description each router area keeps
// next to its router (`*.openapi.ts`). tests/api/openapi.test.ts validates it and checks that
// every registered route is described and every described route exists: an area that adds a
// route adds its description in the same change.

import { adminApi } from '../admin/admin.openapi';
import { adminAnalyticsApi } from '../admin/analytics.openapi';
import { adminPlansApi } from '../admin/plans.openapi';
import { sandboxCheckoutPageApi } from '../billing/sandbox-page.openapi';
import { adminPaymentsApi } from '../admin/payments.openapi';
import { adminWhatsAppApi } from '../admin/whatsapp.openapi';
import { whatsappWebhookApi } from '../whatsapp/webhook.openapi';
import { apiDescriptionApi } from '../api-description.openapi';
import { billingApi } from '../billing/billing.openapi';
import { chatApi } from '../chat/chat.openapi';
import { conversationsApi } from '../conversations/conversations.openapi';
import { documentsApi } from '../documents/documents.openapi';
import { graphqlApi } from '../graphql.openapi';
import { integrationsApi } from '../integrations/integrations.openapi';
import { connectorManagerApi } from '../../connector-manager/connector-manager.openapi';
import { toolCallsApi } from '../tools/tool-calls.openapi';
import { integrationImportApi } from '../integrations/import.openapi';
import { sdkConnectionsApi } from '../sdk-connections/sdk-connections.openapi';
import { meSessionsApi } from '../me/sessions.openapi';
import { meAccountApi } from '../me/account.openapi';
import { meNotificationsApi } from '../me/notifications.openapi';
import { unsubscribeApi } from '../notifications/unsubscribe.openapi';
import { operationsApi } from '../operations.openapi';
import { orgAuditLogsApi } from '../org/audit-logs.openapi';
import { orchestrationEventsApi } from '../orchestration/orchestration-events.openapi';
import { orgMembersApi } from '../org/members.openapi';
import { orgTeamsApi } from '../org/teams.openapi';
import { orgWorkspacesApi } from '../org/workspaces.openapi';
import { publicApi } from '../public.openapi';
import { teamApi } from '../team/team.openapi';
import { tenantApi } from '../tenant/tenant.openapi';
import { toolsApi } from '../tools/tools.openapi';
import { widgetPagesApi } from '../widget/widget-pages.openapi';
import { widgetApi } from '../widget/widget.openapi';
import { tenantLeadsApi } from '../tenant/leads.openapi';
import { tenantEndUsersApi } from '../tenant/end-users.openapi';
import { widgetFeedbackHandoffApi } from '../widget/feedback-handoff.openapi';
import { widgetLeadsApi } from '../widget/leads.openapi';
import { widgetSpeechApi } from '../widget/speech.openapi';
import type { Access, ApiArea, ErrorStatus, Method, RouteDescription, Schema } from './describe';

/** Every area, in the order the document lists them. */
const AREAS: readonly ApiArea[] = [
  operationsApi,
  apiDescriptionApi,
  graphqlApi,
  publicApi,
  meSessionsApi,
  meAccountApi,
  meNotificationsApi,
  unsubscribeApi,
  orgMembersApi,
  orgTeamsApi,
  orgWorkspacesApi,
  orgAuditLogsApi,
  orchestrationEventsApi,
  billingApi,
  teamApi,
  adminApi,
  adminPlansApi,
  sandboxCheckoutPageApi,
  adminAnalyticsApi,
  adminPaymentsApi,
  adminWhatsAppApi,
  whatsappWebhookApi,
  chatApi,
  conversationsApi,
  tenantApi,
  documentsApi,
  integrationsApi,
  integrationImportApi,
  connectorManagerApi,
  toolsApi,
  toolCallsApi,
  sdkConnectionsApi,
  widgetPagesApi,
  widgetApi,
  tenantLeadsApi,
  tenantEndUsersApi,
  widgetLeadsApi,
  widgetFeedbackHandoffApi,
  widgetSpeechApi,
];

const ERROR_RESPONSES: Record<ErrorStatus, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'the request is invalid: a bad body, query or field (`field` names it), or malformed JSON' },
  401: { name: 'Unauthorized', description: 'the credential is missing, invalid, expired, revoked, or of the wrong kind' },
  403: {
    name: 'Forbidden',
    description: "the caller's role or a rule of the organization does not allow this, the organization is suspended (`tenant_suspended`) or deleted (`tenant_deleted`), or its plan lacks a feature (`feature_not_in_plan`, with `feature` and `plan`: the cheapest plan that has it)",
  },
  404: { name: 'NotFound', description: 'no such resource (or not in the caller\'s organization)' },
  409: { name: 'Conflict', description: 'the change conflicts with the current state (a name taken, the last owner, ...)' },
  410: { name: 'Gone', description: 'the resource has expired' },
  412: { name: 'PreconditionFailed', description: 'the resource changed since it was read (`If-Match`)' },
  413: { name: 'PayloadTooLarge', description: 'the body is larger than the limit' },
  415: { name: 'UnsupportedMediaType', description: 'the body is not of a media type this route accepts' },
  422: { name: 'UnprocessableContent', description: 'the request cannot be processed as sent' },
  429: {
    name: 'TooManyRequests',
    description: 'a rate limit was hit (`rate_limited`; `Retry-After` says when to try again), or a quota of the plan (`quota_exceeded`, with `quota`, `limit`, `used` and `resets_at`, null for a limit that does not reset)',
  },
  502: {
    name: 'BadGateway',
    description: 'an outside service the platform relies on (the payment provider, the assistant’s model server, an organization’s connector: `connector_unavailable` with `reason` and `detail`) refused or could not be reached; try again later',
  },
  503: {
    name: 'ServiceUnavailable',
    description:
      'the change is recorded, but the read models its answer comes from had not caught up within READ_YOUR_WRITES_TIMEOUT_MS (`read_model_behind`): read the resource again after `Retry-After` rather than repeat the change',
  },
};

const SECURITY: Record<Access, Array<Record<string, string[]>>> = {
  public: [],
  user: [{ userToken: [] }],
  admin_token: [{ adminToken: [] }],
  metrics_token: [{ metricsToken: [] }],
  optional_user: [{}, { userToken: [] }],
  connector_manager_token: [{ connectorManagerToken: [] }],
  widget_token: [{ widgetToken: [] }],
  user_or_widget_token: [{ userToken: [] }, { widgetToken: [] }],
};

const PATH_PARAMETER = /\{([^}]+)\}/g;

/** `get /api/v1/org/teams/{id}` -> `getOrgTeamsId`, unique because method and path are. */
function operationId(method: Method, path: string): string {
  const words = path
    .replace(/^\/api\/v1/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method + words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
}

function requestBodyOf(method: Method, route: RouteDescription): Schema | undefined {
  const body = route.body;
  if (!body) return undefined;
  const description = body.description ? { description: body.description } : {};
  if ('json' in body) {
    const content: Schema = { 'application/json': { schema: body.json } };
    // Any JSON is parsed (bodies/json.ts); on a partial update it reads as a merge patch.
    if (method === 'patch') content['application/merge-patch+json'] = { schema: body.json };
    return { required: true, ...description, content };
  }
  if ('multipart' in body) return { required: true, ...description, content: { 'multipart/form-data': { schema: body.multipart } } };
  if ('form' in body) return { required: true, ...description, content: { 'application/x-www-form-urlencoded': { schema: body.form } } };
  return { required: true, ...description, content: Object.fromEntries(body.raw.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])) };
}

function errorStatusesOf(method: Method, route: RouteDescription): ErrorStatus[] {
  const statuses = new Set<ErrorStatus>(route.errors ?? []);
  // A change by a member or the operator is answered from the read models, after waiting for them.
  if (method !== 'get' && (route.access === 'user' || route.access === 'admin_token')) statuses.add(503);
  if (route.access !== 'public' && route.access !== 'optional_user') statuses.add(401);
  // A widget token of a suspended or deleted organization, a disabled widget, or a page on an origin the organization does not allow.
  if (route.access === 'widget_token' || route.access === 'user_or_widget_token') statuses.add(403);
  // A user token of a suspended organization is 403 `tenant_suspended` on every route.
  if (route.access === 'user' || (route.role && route.role !== 'member')) statuses.add(403);
  if (route.query?.length) statuses.add(400);
  if (route.body) {
    if (!('raw' in route.body)) statuses.add(400);
    statuses.add(413);
    statuses.add(415);
  }
  if (route.idempotent) for (const status of [400, 409, 422] as const) statuses.add(status);
  if (route.versioned === 'conditional') for (const status of [400, 412] as const) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'makes a retry safe: the same key with the same request gives the first answer again and creates nothing new (for IDEMPOTENCY_KEY_TTL_SECONDS); the same key with another request is 422 idempotency_key_reused; while the first still runs, 409 idempotency_key_in_use with Retry-After',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};
const IF_MATCH_PARAMETER = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'the ETag the client last saw: the write happens only if the resource is still at that version (412 revision_mismatch otherwise); without it the last writer wins',
  schema: { type: 'string' },
};
const ETAG_HEADER = { description: "the resource's version, for If-Match", schema: { type: 'string' } };
const REPLAYED_HEADER = { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } };

function operationOf(area: ApiArea, path: string, method: Method, route: RouteDescription): Schema {
  const parameters = [
    ...[...path.matchAll(PATH_PARAMETER)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...(route.query ?? []).map((query) => ({ name: query.name, in: 'query', required: query.required ?? false, description: query.description, schema: query.schema })),
    ...(route.headers ?? []).map((header) => ({ name: header.name, in: 'header', required: header.required ?? false, description: header.description, schema: header.schema })),
    ...(route.idempotent ? [IDEMPOTENCY_KEY_PARAMETER] : []),
    ...(route.versioned === 'conditional' ? [IF_MATCH_PARAMETER] : []),
  ];
  const description = [route.description, route.role && route.role !== 'member' ? `Needs the ${route.role} role${route.role === 'owner' ? '' : ' or higher'}.` : undefined]
    .filter(Boolean)
    .join(' ');
  const { success } = route;
  const successTypes = success.content ? (typeof success.content.type === 'string' ? [success.content.type] : success.content.type) : [];
  const successContent =
    success.json || success.content
      ? {
          ...(success.json ? { 'application/json': { schema: success.json } } : {}),
          ...(success.content ? Object.fromEntries(successTypes.map((type) => [type, { schema: success.content!.schema }])) : {}),
        }
      : undefined;
  const headers = {
    ...success.headers,
    ...(route.versioned && success.status !== 204 ? { ETag: ETAG_HEADER } : {}),
    ...(route.idempotent ? { 'Idempotent-Replayed': REPLAYED_HEADER } : {}),
  };
  const responses: Schema = {
    [String(success.status)]: { description: success.description, ...(Object.keys(headers).length > 0 ? { headers } : {}), ...(successContent ? { content: successContent } : {}) },
  };
  for (const status of errorStatusesOf(method, route)) responses[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  for (const [status, answer] of Object.entries(route.otherAnswers ?? {})) {
    // Both where the client chooses by Accept (a page for a browser, JSON otherwise).
    const types = { ...(answer.json ? { 'application/json': { schema: answer.json } } : {}), ...(answer.content ? { [answer.content.type]: { schema: answer.content.schema } } : {}) };
    const content = Object.keys(types).length > 0 ? types : undefined;
    responses[status] = { description: answer.description, ...(answer.headers ? { headers: answer.headers } : {}), ...(content ? { content } : {}) };
  }
  const requestBody = requestBodyOf(method, route);
  return {
    operationId: operationId(method, path),
    tags: [area.tag],
    summary: route.summary,
    ...(description ? { description } : {}),
    security: SECURITY[route.access],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

function components(schemas: Record<string, Schema>): Schema {
  const responses = Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, { name, description }]) => [
      name,
      {
        description,
        ...(status === '429' || status === '503' ? { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
  return {
    securitySchemes: {
      userToken: { type: 'http', scheme: 'bearer', bearerFormat: 'PASETO v4.public', description: 'a user token from the GraphQL `login` or `verify_otp` mutation (or accept-invite, switch-tenant), scoped to one organization' },
      adminToken: { type: 'http', scheme: 'bearer', bearerFormat: 'PASETO v4.public', description: 'a super-admin token from `POST /api/v1/admin/auth/login`' },
      metricsToken: { type: 'http', scheme: 'bearer', description: 'the `METRICS_AUTH_TOKEN` of the deployment' },
      connectorManagerToken: { type: 'http', scheme: 'bearer', description: 'the `CONNECTOR_MANAGER_TOKEN` of the deployment' },
      widgetToken: {
        type: 'http',
        scheme: 'bearer',
        description: "an organization's widget token (publishable: it is in the embedding page; an admin reads it in the console settings, `rotate_widget_token` replaces it at once); refused on every other route",
      },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'string', description: 'stable, machine-readable: `invalid_request`, `team_not_found`, `insufficient_role`, ...' },
          message: { type: 'string', description: 'for people; may change' },
          field: { type: 'string', description: 'the input field at fault, for a bad input (`members.2.user_id`)' },
          quota: { type: 'string', enum: ['messages_per_month', 'documents', 'users', 'business_tools'], description: '`quota_exceeded`: the quota' },
          limit: { type: 'integer', description: '`quota_exceeded`: the limit that applies' },
          used: { type: 'integer', description: '`quota_exceeded`: what is used now' },
          resets_at: { type: ['string', 'null'], format: 'date-time', description: '`quota_exceeded`: when the count starts again; null for limits that do not reset' },
          feature: { type: 'string', enum: ['sdk_connections', 'whatsapp', 'handoff', 'crm'], description: '`feature_not_in_plan`: the feature' },
          plan: { type: ['string', 'null'], description: '`feature_not_in_plan`: the code of the cheapest plan that has it' },
          setting: { type: 'string', enum: ['lead_form', 'handoff_button', 'feedback', 'voice', 'visitor_erasure'], description: '`widget_feature_disabled`: the widget setting that is off' },
          tools: { type: 'integer', description: '`integration_has_tools`: how many tools still call the integration' },
          errors: {
            type: 'array',
            items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } }, required: ['field', 'message'] },
            description: '`invalid_arguments`: every argument that fails the tool\'s input_schema (`arguments.petId`), with why',
          },
          reason: { type: 'string', description: '`connector_unavailable`: why the connector gave no answer (`unreachable`, `timeout`, `invalid_signature`, ...)' },
          detail: { type: 'string', description: '`connector_unavailable`: what was wrong, in words' },
        },
      },
      ...schemas,
    },
    responses,
  };
}

/** Builds the document from `areas`; throws on a route or schema described twice. */
export function buildOpenApiDocument(areas: readonly ApiArea[] = AREAS): Schema {
  const paths: Record<string, Record<string, Schema>> = {};
  const operationIds = new Set<string>();
  const schemas: Record<string, Schema> = {};
  const tags: Array<{ name: string; description?: string }> = [];
  for (const area of areas) {
    if (!tags.some((tag) => tag.name === area.tag)) tags.push({ name: area.tag, ...(area.description ? { description: area.description } : {}) });
    for (const [name, schema] of Object.entries(area.schemas ?? {})) {
      if (name in schemas || name === 'Error') throw new Error(`the schema ${name} is described twice`);
      schemas[name] = schema;
    }
    for (const [path, methods] of Object.entries(area.routes)) {
      for (const [method, route] of Object.entries(methods) as Array<[Method, RouteDescription]>) {
        paths[path] ??= {};
        if (paths[path][method]) throw new Error(`${method.toUpperCase()} ${path} is described twice`);
        const operation = operationOf(area, path, method, route);
        if (operationIds.has(operation.operationId as string)) throw new Error(`two routes have the operationId ${String(operation.operationId)}; rename one`);
        operationIds.add(operation.operationId as string);
        paths[path][method] = operation;
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc platform REST API',
      version: 'v1',
      description:
        'The REST routes of the platform (spec section 4). Bodies are JSON in snake_case unless a route says otherwise; errors are `{code, message}` with `field` for a bad input. The console API is GraphQL (`POST /graphql`, schema at `GET /graphql/schema.graphql`).',
    },
    tags,
    paths,
    components: components(schemas),
  };
}

let document: Schema | null = null;

/** The platform's document, built once per process. */
export function openApiDocument(): Schema {
  document ??= buildOpenApiDocument();
  return document;
}
