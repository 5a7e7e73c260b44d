// OpenAPI description of the widget's routes of widget/widget.ts. docs/widget.md tells the
// visitor and identity model, CORS and the origins, and the chat's event stream.

import { RECENT_MESSAGES } from '../../../application/widget/widget-chat';
import { IDENTITY_VERIFICATION_MODES, LAUNCHER_ICONS, LEAD_FORM_FIELDS, WIDGET_POSITIONS } from '../../../domain/widget-config/widget-config';
import { END_USER_HEADERS, EVENT_STREAM } from '../chat/chat.openapi';
import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { IdentityClearBody, PREFLIGHT_MAX_AGE_SECONDS, WIDGET_ALLOWED_METHODS, WidgetChatBody } from './widget';
import { WIDGET_REQUEST_HEADERS, WIDGET_USER_HASH_HEADER, WIDGET_USER_ID_HEADER, WIDGET_VISITOR_HEADER } from './widget-auth';

/** The headers that say who the visitor is (docs/widget.md "Visitors and verified identity"). */
export const VISITOR_HEADERS: readonly QueryParameter[] = [
  {
    name: WIDGET_VISITOR_HEADER,
    required: true,
    description: 'the random visitor id the widget keeps in the browser: 22 to 64 characters of A-Z a-z 0-9 _ - (400 `invalid_visitor` naming `visitor_id` otherwise); whoever holds it continues that visitor’s conversations',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22,64}$' },
  },
  {
    name: WIDGET_USER_ID_HEADER,
    description: 'verified identity: the host site’s user id (1 to 200 printable characters), as identify({user_id, user_hash}) gave it',
    schema: { type: 'string', maxLength: 200 },
  },
  {
    name: WIDGET_USER_HASH_HEADER,
    description: 'the hex HMAC-SHA256 of X-Widget-User-Id with the widget’s identity secret, computed by the host’s backend: 401 `invalid_identity` when it does not match (or verification is off); 401 `identity_required` when the widget requires verified visitors and none is given',
    schema: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
  },
];

const ORIGIN_RULE =
  'A browser’s `Origin` must be one of the widget’s `allowed_origins` or the platform’s own (403 `origin_not_allowed` otherwise, without `Access-Control-Allow-Origin`); an allowed one gets `Access-Control-Allow-Origin` with every answer, errors included. A request without `Origin` (no browser page) is not checked. 403 `tenant_suspended` / `tenant_deleted`, 403 `widget_disabled` when the organization turned its widget off; 401 `invalid_widget_token` for a missing, unknown or rotated token.';

export const widgetApi: ApiArea = {
  tag: 'widget',
  description: 'The website widget (spec 4.4), with the organization’s widget token: a visitor’s chat, the widget’s appearance, the visitor’s own conversation, leads, feedback, handoff and speech. docs/widget.md has the visitor model and CORS.',
  schemas: {
    WidgetAppearance: object(
      {
        tenant: object({ name: string('the display name'), slug: string(), logo_url: nullable(string()) }),
        assistant_name: string(),
        title: string('the widget’s title, or the organization’s display name'),
        welcome_message: string('the widget’s, or the branding’s; may be empty'),
        primary_color: string('#rrggbb'),
        background_color: string('#rrggbb'),
        text_color: string('#rrggbb'),
        position: enumOf(WIDGET_POSITIONS),
        launcher_icon: enumOf(LAUNCHER_ICONS),
        theme: { type: 'object', additionalProperties: { type: 'string' }, description: 'token -> value, set as the CSS custom properties `--svc-<token>` inside the widget’s shadow root' },
        custom_css: string('applied inside the widget’s shadow root'),
        features: object({
          lead_form: boolean(),
          lead_form_fields: arrayOf(enumOf(LEAD_FORM_FIELDS)),
          handoff_button: boolean(),
          feedback: boolean(),
          voice: boolean(),
          visitor_erasure: boolean('the visitor may erase their own conversations (POST /api/v1/widget/conversations/{id}/erase)'),
        }),
        identity_verification: enumOf(IDENTITY_VERIFICATION_MODES, 'required: only visitors the host site vouches for (X-Widget-User-Id and -Hash) may chat'),
      },
      'what a page embedding the widget shows; never the identity secret, the allowed origins or the workspace',
    ),
    WidgetConversation: object({
      id: string(),
      title: string('the first line of its first message, unless an agent renamed it'),
      status: enumOf(['open', 'pending', 'handed_off', 'resolved']),
      assistant_paused: boolean('true while a person of the organization has it: the assistant answers nothing until it is set back to open'),
      started_at: dateTime(),
      last_activity_at: dateTime('the last message, or started_at before the first'),
      message_count: integer('the visitor’s messages, the assistant’s answers and people’s replies'),
      last_message_preview: nullable(string('the start of the last message, in plain text')),
    }),
    WidgetMessage: object({
      id: string(),
      role: enumOf(['user', 'assistant', 'agent'], 'the visitor, the assistant, or a person of the organization who took the conversation over'),
      text: string('empty for a failed answer'),
      citations: arrayOf(ref('Citation')),
      created_at: dateTime(),
      failed: boolean('an answer the assistant could not give'),
      feedback_rating: { anyOf: [enumOf(['up', 'down']), { type: 'null' }], description: 'the visitor’s feedback on an answer; null until given' },
    }),
  },
  routes: {
    '/api/v1/widget/{path}': {
      options: {
        summary: 'CORS preflight of the widget routes',
        description: `Answers the preflight of any /api/v1/widget/ route (\`{path}\` may hold slashes) with 204: \`Access-Control-Allow-Origin\` the asking Origin, \`Access-Control-Allow-Methods: ${WIDGET_ALLOWED_METHODS}\`, \`Access-Control-Allow-Headers\` (${WIDGET_REQUEST_HEADERS.join(', ')}), \`Access-Control-Max-Age: ${PREFLIGHT_MAX_AGE_SECONDS}\`, \`Vary: Origin\`. A preflight carries no token, so the organization’s origins are checked on the actual request.`,
        access: 'public',
        success: {
          status: 204,
          description: 'the methods and headers a widget request may use',
          headers: {
            'Access-Control-Allow-Origin': { description: 'the Origin of the preflight', schema: { type: 'string' } },
            'Access-Control-Allow-Methods': { description: WIDGET_ALLOWED_METHODS, schema: { type: 'string' } },
            'Access-Control-Allow-Headers': { description: 'the widget’s request headers', schema: { type: 'string' } },
            'Access-Control-Max-Age': { description: 'seconds a browser may keep the answer', schema: { type: 'string' } },
          },
        },
      },
    },
    '/api/v1/widget/chat': {
      post: {
        summary: 'A visitor asks the assistant',
        description: `One turn of the visitor, as POST /api/v1/chat: \`message\` (1 to 8000 characters, 400 \`invalid_message\`); without \`conversation_id\` a conversation of channel \`widget\` starts in the widget’s workspace (its \`workspace_id\`, or the organization’s default workspace), with one it continues that conversation if the visitor started it (404 \`conversation_not_found\` otherwise). The answer comes from that workspace’s knowledge and tools only. As JSON when the answer is complete (honours Idempotency-Key), or streamed with \`Accept: text/event-stream\` (an Idempotency-Key is then 400). Counts one message against the plan’s quota (429 \`quota_exceeded\` with the numbers: nothing is recorded). 502 \`assistant_unavailable\` when the model server fails. ${ORIGIN_RULE}`,
        access: 'widget_token',
        headers: [...VISITOR_HEADERS, ...END_USER_HEADERS],
        body: { json: schemaOfCodec(WidgetChatBody) },
        success: {
          status: 200,
          description: `the turn as JSON (\`ChatTurn\`), or with \`Accept: text/event-stream\`: ${EVENT_STREAM}`,
          json: ref('ChatTurn'),
          content: { type: 'text/event-stream', schema: { type: 'string', description: 'event: / data: frames, each ended by a blank line' } },
        },
        errors: [404, 429, 502],
        idempotent: true,
      },
    },
    '/api/v1/widget/settings': {
      get: {
        summary: 'The widget’s appearance',
        description: `How the widget looks and what it offers, for the page that embeds it. ${ORIGIN_RULE}`,
        access: 'widget_token',
        success: { status: 200, description: 'the appearance', json: ref('WidgetAppearance') },
      },
    },
    '/api/v1/widget/conversations': {
      get: {
        summary: 'The visitor’s conversations',
        description: `The widget conversations the visitor started (deleted ones aside), the most recently active first: for a verified visitor (signed user id), theirs on any device, so a page can offer them again where a device has none in memory; for an anonymous visitor, those of the visitor id this browser keeps. ${ORIGIN_RULE}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'conversations, the most recently active first', json: page(ref('WidgetConversation')) },
        errors: [],
      },
    },
    '/api/v1/widget/conversations/{id}/messages': {
      get: {
        summary: 'The messages of the visitor’s conversation',
        description: `The visitor’s messages, the assistant’s answers and people’s replies, oldest first (tool steps are not shown). Only a conversation of channel \`widget\` the visitor started: any other is 404 \`conversation_not_found\`. /ws/chat’s \`ready\` gives the last ${RECENT_MESSAGES} in the same shape. ${ORIGIN_RULE}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'messages, oldest first', json: page(ref('WidgetMessage')) },
        errors: [404],
      },
    },
    '/api/v1/widget/identity/clear': {
      post: {
        summary: 'Forget the end-user token and session',
        description: `The host page’s clearIdentity(): the X-End-User-Token and X-End-User-Session the visitor’s messages carried in \`conversation_id\` are no longer forwarded to any business tool, also by calls of earlier turns that run later (an approval, a connector’s challenge). Recorded on the conversation (\`EndUserIdentityCleared\`) only when a message since the last clear carried one. Only the visitor’s own conversation (404 \`conversation_not_found\`); without \`conversation_id\` nothing is held server-side and nothing is recorded. ${ORIGIN_RULE}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        body: { json: schemaOfCodec(IdentityClearBody) },
        success: { status: 204, description: 'forgotten' },
        errors: [404],
      },
    },
  },
};
