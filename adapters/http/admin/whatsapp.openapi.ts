// OpenAPI description of the super admin's WhatsApp routes (admin/whatsapp.ts).

import { OUTBOX_STATUSES } from '../../../application/whatsapp/outbox';
import { DEFAULT_GRAPH_API_VERSION, SECRET_LENGTHS } from '../../../domain/whatsapp-config/whatsapp-config';
import { DELIVERY_STATUSES, REPLY_KINDS } from '../../../domain/whatsapp-reply/whatsapp-reply';
import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { WhatsAppConfigBody } from './whatsapp';

const ACTOR = object({ kind: string('admin for the super admin'), id: string() });
const TENANT: QueryParameter = { name: 'tenant_id', description: 'the organization whose configuration it is', required: true, schema: { type: 'string', minLength: 1 } };

export const adminWhatsAppApi: ApiArea = {
  tag: 'super admin',
  schemas: {
    WhatsAppConfig: object(
      {
        tenant_id: string(),
        configured: boolean('false until the first PUT'),
        phone_number_id: nullable(string('Meta’s id of the business phone number')),
        display_phone_number: nullable(string()),
        has_verify_token: boolean('the verify token itself is never answered'),
        has_app_secret: boolean('the app secret itself is never answered'),
        has_access_token: boolean('the access token itself is never answered'),
        enabled: boolean(),
        graph_api_version: nullable(string()),
        workspace_id: nullable(string('null: the organization’s default workspace answers')),
        replies_via: enumOf(['cloud_api', 'outbox'], 'where replies go now: the Cloud API, or the embedded outbox (no access token, or WHATSAPP_OUTBOX=true)'),
        updated_at: nullable(dateTime()),
        updated_by: { anyOf: [ACTOR, { type: 'null' }] },
      },
      'an organization’s WhatsApp channel; never a secret',
    ),
    WhatsAppOutboxMessage: object(
      {
        id: string(),
        tenant_id: string(),
        phone_number_id: string('the business number it is sent from'),
        to: string('the recipient’s WhatsApp id; `[erased]` once its conversation was erased (docs/personal-data.md)'),
        text: string('`[erased]` once its conversation was erased'),
        kind: enumOf(REPLY_KINDS, 'answer: the assistant’s; notice: only text understood, assistant unavailable, try again'),
        conversation_id: nullable(string()),
        in_reply_to: nullable(string('the inbound WhatsApp message it answers')),
        status: enumOf(OUTBOX_STATUSES, 'pending, retrying, sent (through the Cloud API), kept (in the outbox, never sent), failed (given up)'),
        transport: nullable(enumOf(['cloud_api', 'outbox'])),
        provider_message_id: nullable(string('Meta’s id of the sent message')),
        delivery_status: nullable(enumOf(DELIVERY_STATUSES, 'Meta’s latest status callback')),
        delivery_status_at: nullable(dateTime()),
        attempts: integer(),
        last_status_code: nullable(integer()),
        last_error: nullable(string()),
        queued_at: dateTime(),
        last_attempt_at: nullable(dateTime()),
        next_attempt_at: nullable(dateTime()),
        settled_at: nullable(dateTime('when it was sent, kept or given up')),
      },
      'a message the platform sends a WhatsApp user',
    ),
  },
  routes: {
    '/api/v1/admin/whatsapp/config': {
      get: {
        summary: 'An organization’s WhatsApp channel',
        access: 'admin_token',
        query: [TENANT],
        versioned: 'read',
        success: { status: 200, description: 'the configuration (never a secret)', json: ref('WhatsAppConfig') },
        errors: [404],
      },
      put: {
        summary: 'Set an organization’s WhatsApp channel',
        description: `Every field is optional: one left out keeps what is configured; a first configuration needs \`phone_number_id\`, \`verify_token\` and \`app_secret\`. Secrets are printable ASCII without spaces: verify_token ${SECRET_LENGTHS.verify_token.min} to ${SECRET_LENGTHS.verify_token.max} characters, app_secret ${SECRET_LENGTHS.app_secret.min} to ${SECRET_LENGTHS.app_secret.max}, access_token ${SECRET_LENGTHS.access_token.min} to ${SECRET_LENGTHS.access_token.max} (null removes it: replies then stay in the outbox). \`graph_api_version\` defaults to ${DEFAULT_GRAPH_API_VERSION}; \`workspace_id\` null is the default workspace. 400 \`invalid_whatsapp_config\` naming the field; 404 \`tenant_not_found\`; 409 \`whatsapp_phone_number_id_taken\` when another organization has the number, \`tenant_deleted\`. The same configuration again records nothing.`,
        access: 'admin_token',
        query: [TENANT],
        versioned: 'conditional',
        body: { json: schemaOfCodec(WhatsAppConfigBody) },
        success: { status: 200, description: 'the configuration', json: ref('WhatsAppConfig') },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/whatsapp/configs': {
      get: {
        summary: 'Every organization’s WhatsApp channel',
        access: 'admin_token',
        query: [{ name: 'enabled', description: 'only channels on (true) or off (false)', schema: { type: 'string', enum: ['true', 'false'] } }, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'the configurations, most recently changed first', json: page(ref('WhatsAppConfig')) },
      },
    },
    '/api/v1/admin/whatsapp/outbox': {
      get: {
        summary: 'WhatsApp messages the platform sends',
        description: 'Replies kept in the embedded outbox and replies sent through the Cloud API, with their delivery, newest first.',
        access: 'admin_token',
        query: [
          { name: 'tenant_id', description: 'only this organization’s messages', schema: { type: 'string', minLength: 1 } },
          { name: 'status', description: 'only messages of this status', schema: enumOf(OUTBOX_STATUSES) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'the messages, newest first', json: page(ref('WhatsAppOutboxMessage')) },
      },
    },
  },
};
