// OpenAPI description of the tenant configuration and analytics routes (tenant/*.ts).
// docs/tenant-configuration.md tells the handoff payload, its signature and retry schedule,
// and the analytics definitions.

import { CONVERSATION_COUNTERS } from '../../../application/analytics/conversation-analytics';
import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS } from '../../../application/analytics/day-range';
import { DELIVERY_STATUSES } from '../../../application/handoff/handoff-deliveries';
import { CRM_KINDS, LEAD_FIELDS } from '../../../domain/crm-config/crm-config';
import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, type Schema, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { CrmBody } from './crm';
import { RATINGS } from './feedbacks';
import { SUMMARY_DEFAULT_GROUPS } from './unanswered-questions';
import { SUMMARY_MAX_GROUPS, SUMMARY_SCAN } from '../../../application/conversation/unanswered-questions';
import { HandoffBody } from './handoff';
import { WidgetSettingsBody } from './widget';
import {
  IDENTITY_VERIFICATION_MODES,
  LAUNCHER_ICONS,
  LEAD_FORM_FIELDS,
  MAX_ALLOWED_ORIGINS,
  MAX_CUSTOM_CSS_LENGTH,
  MAX_THEME_TOKENS,
  WIDGET_POSITIONS,
} from '../../../domain/widget-config/widget-config';

const ACTOR = object({ kind: string('user, admin, end_user, system, ...'), id: string() });
const day = (description: string): Schema => ({ type: 'string', format: 'date', description });
const rate = (description: string): Schema => ({ type: ['number', 'null'], minimum: 0, maximum: 1, description });
const counts = (description?: string): Schema => object(Object.fromEntries(CONVERSATION_COUNTERS.map((counter) => [counter, integer()])), description);

const HANDOFF_CONFIG_FIELDS = {
  configured: boolean('false until the first POST; the other fields are then null or false'),
  url: nullable(string('the webhook')),
  enabled: boolean('whether handoffs are posted'),
  has_secret: boolean('the secret itself is never answered'),
  secret_hint: nullable(string('the secret’s last four characters')),
  secret_source: { anyOf: [enumOf(['given', 'generated']), { type: 'null' }], description: 'whether a person gave the secret or the platform made it' },
  updated_at: nullable(dateTime()),
  updated_by: { anyOf: [ACTOR, { type: 'null' }] },
};

const WIDGET_CONFIG_FIELDS = {
  configured: boolean('false until the first change: the settings are the defaults'),
  title: string('the panel’s header; empty: the organization’s display name'),
  welcome_message: string('the first bubble; empty: the branding’s welcome message'),
  primary_color: string('#rrggbb'),
  background_color: string('#rrggbb'),
  text_color: string('#rrggbb'),
  position: enumOf(WIDGET_POSITIONS),
  launcher_icon: enumOf(LAUNCHER_ICONS),
  theme: { type: 'object', additionalProperties: { type: 'string' }, description: 'theme tokens: name -> one CSS value, set as `--svc-<name>` inside the shadow root' },
  custom_css: string('CSS applied inside the widget’s shadow root'),
  allowed_origins: arrayOf(string(), 'the sites that may embed the widget (lower case, no trailing slash)'),
  workspace_id: nullable(string('the workspace the widget answers from; null: the default workspace')),
  lead_form: boolean(),
  lead_form_fields: arrayOf(enumOf(LEAD_FORM_FIELDS)),
  handoff_button: boolean(),
  feedback: boolean(),
  voice: boolean(),
  visitor_erasure: boolean('visitors may erase their own conversations from the widget (default true); off for an organization bound to keep its records'),
  identity_verification: enumOf(IDENTITY_VERIFICATION_MODES),
  has_identity_secret: boolean('the secret itself is only answered by the rotation that made it'),
  identity_secret_rotated_at: nullable(dateTime()),
  updated_at: nullable(dateTime()),
  updated_by: { anyOf: [ACTOR, { type: 'null' }] },
};

const WIDGET_RULES = `Each setting given replaces its value; the others stay. 400 \`invalid_widget_settings\` naming the setting: a colour that is not #rrggbb; more than ${MAX_THEME_TOKENS} theme tokens, a token name not of lower-case letters, digits and -, a value that is not one CSS value (1 to 200 characters without ; { } < > \\); custom_css longer than ${MAX_CUSTOM_CSS_LENGTH} characters, with @import or a <style> tag; lead_form_fields without email or phone; a title over 100 or a welcome message over 500 characters. 400 \`invalid_origin\` naming \`allowed_origins.<i>\`: an origin that is not https://host[:port] or https://*.host[:port] (http only for localhost), more than ${MAX_ALLOWED_ORIGINS}. 404 \`workspace_not_found\` for a workspace_id that is not the organization’s. 409 \`identity_secret_missing\` for identity_verification optional or required before an identity secret was made. 400 \`invalid_request\` for a field that is no setting.`;

const RANGE: readonly QueryParameter[] = [
  {
    name: 'from',
    description: `first day, YYYY-MM-DD (UTC), included; default ${DEFAULT_RANGE_DAYS - 1} days before \`to\`. Not a calendar day, after \`to\`, or more than ${MAX_RANGE_DAYS} days before it: 400 \`invalid_request\` naming the field`,
    schema: { type: 'string', format: 'date' },
  },
  { name: 'to', description: 'last day, YYYY-MM-DD (UTC), included; default today. Not a calendar day: 400 `invalid_request` naming `to`', schema: { type: 'string', format: 'date' } },
];

const UNANSWERED_WORKSPACE: QueryParameter = { name: 'workspace_id', description: 'only the conversations of this workspace', schema: { type: 'string', minLength: 1 } };
const UNANSWERED_FROM: QueryParameter = {
  name: 'from',
  description: 'lower bound on `asked_at`, included: an ISO 8601 time, or a day (YYYY-MM-DD, UTC) standing for its first instant; anything else is 400 naming it',
  schema: { type: 'string' },
};
const UNANSWERED_TO: QueryParameter = {
  name: 'to',
  description: 'upper bound on `asked_at`, included: an ISO 8601 time, or a day (YYYY-MM-DD, UTC) standing for its last instant; anything else is 400 naming it',
  schema: { type: 'string' },
};

const TIME_BOUND = (name: 'from' | 'to', side: string): QueryParameter => ({
  name,
  description: `${side} bound on \`given_at\`, included: an ISO 8601 time, or a day (YYYY-MM-DD, UTC) standing for its ${name === 'from' ? 'first' : 'last'} instant; anything else is 400 naming it`,
  schema: { type: 'string' },
});

const URL_ERRORS =
  '400 naming `url`: `invalid_url` (not an absolute http(s) URL without user name and password), `insecure_url` (not https, unless the operator allows insecure URLs), `private_address` (it names or resolves to a private, loopback, link-local or metadata address, unless the operator allows private networks), `unresolvable_host`.';

export const tenantApi: ApiArea = {
  tag: 'tenant',
  description: 'The organization’s handoff webhook, CRM connector, feedback, assistant analytics (spec 4.8) and website widget configuration (4.4); owner or admin.',
  schemas: {
    HandoffConfig: object(HANDOFF_CONFIG_FIELDS, 'the handoff webhook configuration; never the secret'),
    HandoffConfigAnswer: {
      ...object(HANDOFF_CONFIG_FIELDS),
      properties: { ...HANDOFF_CONFIG_FIELDS, secret: string('only when the platform made the secret in this request (none given, or an empty one): shown this once, never again') },
      description: 'the configuration as it stands after the POST',
    },
    HandoffDelivery: object(
      {
        id: string('the handoff’s id, sent as `x-svc-delivery-id` and `delivery_id` on every attempt'),
        conversation_id: string(),
        status: enumOf(DELIVERY_STATUSES, 'pending (requested, or an attempt under way), retrying (the next attempt is at next_attempt_at), delivered (the webhook answered 2xx), failed (given up)'),
        handed_off_by: ACTOR,
        handed_off_at: dateTime(),
        url: string('the webhook of the latest attempt'),
        attempts: integer('attempts started'),
        last_status_code: nullable(integer('the HTTP status of the latest answer; null when none came')),
        last_error: nullable(string()),
        requested_at: dateTime(),
        last_attempt_at: nullable(dateTime()),
        next_attempt_at: nullable(dateTime()),
        delivered_at: nullable(dateTime()),
        failed_at: nullable(dateTime()),
      },
      'a handoff of a conversation to the webhook, and how its delivery stands',
    ),
    CrmConfig: object(
      {
        configured: boolean('false until the first POST'),
        kind: { anyOf: [enumOf(CRM_KINDS), { type: 'null' }] },
        url: nullable(string()),
        enabled: boolean(),
        has_credential: boolean('the credential itself is never answered'),
        field_mapping: { type: 'object', additionalProperties: { type: 'string' }, description: `lead field (${LEAD_FIELDS.join(', ')}) -> the CRM’s field name` },
        updated_at: nullable(dateTime()),
        updated_by: { anyOf: [ACTOR, { type: 'null' }] },
      },
      'the CRM connector configuration; never the credential',
    ),
    WidgetConfig: object(WIDGET_CONFIG_FIELDS, 'the website widget’s configuration; never the identity secret'),
    WidgetIdentitySecretAnswer: object(
      { ...WIDGET_CONFIG_FIELDS, identity_secret: string('the new identity secret: shown this once, never again; the host’s backend signs its user ids with it (hex HMAC-SHA256)') },
      'the configuration after the rotation, and the new secret',
    ),
    Feedback: object({
      id: string(),
      conversation_id: string(),
      message_id: string('the assistant’s answer rated'),
      rating: enumOf(RATINGS),
      comment: string('may be empty'),
      given_by: ACTOR,
      given_at: dateTime(),
    }),
    UnansweredQuestion: object({
      question_id: string('the user message asked'),
      question: string('its text, as asked'),
      answer_id: string('the answer that said the knowledge base had nothing on it'),
      conversation_id: string(),
      workspace_id: nullable(string()),
      channel: enumOf(['console', 'api', 'widget', 'whatsapp'], 'where it was asked'),
      asked_at: dateTime(),
      answered_at: dateTime(),
    }),
    UnansweredQuestionSummary: object({
      items: arrayOf(
        object({
          question: string('the latest wording'),
          count: integer('how many times it was asked in the range'),
          first_asked_at: dateTime(),
          last_asked_at: dateTime(),
        }),
      ),
      questions: integer('how many questions were read'),
      truncated: boolean('the range held more questions than were read: the counts are of the most recent'),
    }),
    ConversationAnalytics: object({
      from: day('first day, included'),
      to: day('last day, included'),
      totals: counts('sums over the range'),
      rates: object({
        answered_from_knowledge_rate: rate('answered_from_knowledge / assistant_answers; null without answers'),
        no_answer_rate: rate('no_answer / assistant_answers; null without answers'),
        failure_rate: rate('failures / (assistant_answers + failures); null without either'),
        feedback_ratio: rate('feedback_up / (feedback_up + feedback_down); null without feedback'),
      }),
      busiest_hours: arrayOf(object({ hour: integer('0 to 23, UTC'), user_messages: integer() }), '24 buckets, hour 0 first: the users’ messages per hour of the day over the range'),
      days: arrayOf({ ...counts(), properties: { date: day('the day (UTC)'), ...(counts().properties as Record<string, Schema>) }, required: ['date', ...CONVERSATION_COUNTERS] }, 'one per day of the range, oldest first, zeros on a day without'),
    }),
  },
  routes: {
    '/api/v1/tenant/handoff': {
      get: { summary: 'The handoff webhook configuration', access: 'user', role: 'admin', versioned: 'read', success: { status: 200, description: 'the configuration (never the secret)', json: ref('HandoffConfig') } },
      post: {
        summary: 'Set the handoff webhook',
        description: `Sets where a conversation is posted when a person takes it over, signed with the secret (spec 5.2). \`secret\` omitted keeps the current one (one is made when there is none); an empty one makes a new one (rotation); a given one needs 16 to 256 printable ASCII characters (400 \`invalid_secret\`). A made secret is answered in \`secret\`, this once. \`enabled\` omitted keeps the current setting (on at first). ${URL_ERRORS} 403 \`feature_not_in_plan\` when the plan lacks handoff. An upsert: the same configuration again records nothing.`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        body: { json: schemaOfCodec(HandoffBody) },
        success: { status: 200, description: 'the configuration as it stands', json: ref('HandoffConfigAnswer') },
      },
    },
    '/api/v1/tenant/handoff/deliveries': {
      get: {
        summary: 'Handoffs sent to the webhook',
        description: 'Every handoff of the organization’s conversations and how its delivery stands, newest first. Failed attempts are retried with exponential back-off; after the last attempt the handoff is `failed`.',
        access: 'user',
        role: 'admin',
        query: [
          { name: 'status', description: `one of ${DELIVERY_STATUSES.join(', ')}`, schema: enumOf(DELIVERY_STATUSES) },
          { name: 'conversation_id', description: 'only this conversation’s handoffs', schema: { type: 'string' } },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'handoffs, newest first', json: page(ref('HandoffDelivery')) },
      },
    },
    '/api/v1/tenant/crm': {
      get: { summary: 'The CRM connector configuration', access: 'user', role: 'admin', versioned: 'read', success: { status: 200, description: 'the configuration (never the credential)', json: ref('CrmConfig') } },
      post: {
        summary: 'Set the CRM connector',
        description: `Sets where leads go. \`credential\` omitted keeps the current one, null removes it, a string (1 to 4096 printable ASCII characters) replaces it (400 \`invalid_credential\`). \`field_mapping\` maps lead fields (${LEAD_FIELDS.join(', ')}) to the CRM’s field names (letters, digits, _ . -, at most 100; each CRM field once): 400 \`invalid_field_mapping\` naming \`field_mapping.<lead field>\`; omitted keeps the current mapping. ${URL_ERRORS} 403 \`feature_not_in_plan\` when the plan lacks crm. An upsert: the same configuration again records nothing.`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        body: { json: schemaOfCodec(CrmBody) },
        success: { status: 200, description: 'the configuration as it stands', json: ref('CrmConfig') },
      },
    },
    '/api/v1/tenant/widget': {
      get: { summary: 'The website widget’s configuration', access: 'user', role: 'admin', versioned: 'read', success: { status: 200, description: 'the configuration (never the identity secret)', json: ref('WidgetConfig') } },
      post: {
        summary: 'Change the website widget’s settings',
        description: `${WIDGET_RULES} The same settings again record nothing.`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        body: { json: schemaOfCodec(WidgetSettingsBody) },
        success: { status: 200, description: 'the configuration as it stands', json: ref('WidgetConfig') },
        errors: [404, 409],
      },
    },
    '/api/v1/tenant/widget/identity-secret': {
      post: {
        summary: 'Make a new identity secret for verified visitors',
        description: 'Makes a new identity secret and answers it in `identity_secret`, this once. The previous one stops at once: visitors signed with it are refused (401 `invalid_identity`) until the host’s backend signs with the new one.',
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        success: { status: 201, description: 'the configuration and the new secret', json: ref('WidgetIdentitySecretAnswer') },
      },
    },
    '/api/v1/tenant/feedbacks': {
      get: {
        summary: 'Feedback on the assistant’s answers',
        access: 'user',
        role: 'admin',
        query: [{ name: 'rating', description: 'up or down', schema: enumOf(RATINGS) }, TIME_BOUND('from', 'lower'), TIME_BOUND('to', 'upper'), ...PAGE_PARAMETERS],
        success: { status: 200, description: 'feedback, newest first', json: page(ref('Feedback')) },
      },
    },
    '/api/v1/tenant/unanswered-questions': {
      get: {
        summary: 'Questions the knowledge base had no answer to',
        description:
          'The questions the assistant answered without the knowledge base because it found no relevant passage (the analytics’ `no_answer`), newest first: what to write a document about. A deleted or erased conversation takes its questions with it.',
        access: 'user',
        role: 'admin',
        query: [UNANSWERED_WORKSPACE, UNANSWERED_FROM, UNANSWERED_TO, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'the questions, newest first', json: page(ref('UnansweredQuestion')) },
      },
    },
    '/api/v1/tenant/unanswered-questions/summary': {
      get: {
        summary: 'Questions the knowledge base had no answer to, counted as asked alike',
        description: `The same questions grouped: two are one when they read the same once Unicode-normalized, lower-cased and stripped of punctuation and symbols (no guessing at meaning). The most asked first, then the most recently asked; each with its latest wording. The ${SUMMARY_SCAN} most recent questions of the range are read at most (\`truncated\` says when the range held more).`,
        access: 'user',
        role: 'admin',
        query: [
          UNANSWERED_WORKSPACE,
          UNANSWERED_FROM,
          UNANSWERED_TO,
          { name: 'limit', description: `groups, 1 to ${SUMMARY_MAX_GROUPS} (default ${SUMMARY_DEFAULT_GROUPS}); anything else is 400 \`invalid_limit\``, schema: { type: 'integer', minimum: 1, maximum: SUMMARY_MAX_GROUPS, default: SUMMARY_DEFAULT_GROUPS } },
        ],
        success: { status: 200, description: 'the groups, most asked first', json: ref('UnansweredQuestionSummary') },
      },
    },
    '/api/v1/tenant/analytics': {
      get: {
        summary: 'The assistant’s analytics',
        description: 'Conversations, messages, answers from knowledge and without, failures, handoffs and feedback over a range of days (UTC): totals, rates, the busiest hours and day by day.',
        access: 'user',
        role: 'admin',
        query: RANGE,
        success: { status: 200, description: 'the analytics', json: ref('ConversationAnalytics') },
      },
    },
  },
};
