// OpenAPI description of `GET /tenant/end-users/export` and `POST /tenant/end-users/erase`
// (tenant/end-users.ts); docs/personal-data.md, "An end user's data, and erasing it".

import { EXPORT_MAX_CONVERSATIONS, EXPORT_MAX_MESSAGES } from '../../../application/personal-data/end-user-export';
import { type ApiArea, arrayOf, boolean, dateTime, integer, object, ref, schemaOfCodec, string } from '../openapi/describe';
import { EraseEndUserBody } from './end-users';

export const tenantEndUsersApi: ApiArea = {
  tag: 'tenant',
  schemas: {},
  routes: {
    '/api/v1/tenant/end-users/export': {
      get: {
        summary: 'Export an end user’s data',
        description: `For a person's right of access (docs/personal-data.md), named as for their erasure: \`verified_user_id\` or \`whatsapp_number\`, exactly one (400 naming the field otherwise). Every live conversation they started, oldest first, with its messages, and every lead they left that is still listed. At most ${EXPORT_MAX_CONVERSATIONS} conversations and ${EXPORT_MAX_MESSAGES} messages of each; \`truncated\` says when a limit cut it short.`,
        access: 'user',
        role: 'admin',
        query: [
          { name: 'verified_user_id', description: 'the host site’s user id of a widget visitor it vouched for', schema: { type: 'string' } },
          { name: 'whatsapp_number', description: 'a WhatsApp sender’s number in international format', schema: { type: 'string' } },
        ],
        success: {
          status: 200,
          description: 'what the organization holds of them',
          json: object({
            end_user: object({}, '`{verified_user_id}` or `{whatsapp_number}`, as asked'),
            exported_at: dateTime(),
            conversations: arrayOf({ allOf: [ref('Conversation'), object({ messages: arrayOf(ref('ConversationMessage'), 'oldest first') })] }),
            leads: arrayOf(ref('Lead')),
            truncated: boolean('true when a limit cut the export short'),
          }),
        },
        errors: [400],
      },
    },
    '/api/v1/tenant/end-users/erase': {
      post: {
        summary: 'Erase an end user',
        description:
          "For a person's request to have their data erased (docs/personal-data.md), named as the organization knows them: `verified_user_id`, the host site's user id of a widget visitor it vouched for, or `whatsapp_number`, a WhatsApp sender's number in international format (exactly one; 400 naming the field otherwise). Every conversation they started (live or deleted) is erased as POST /api/v1/conversations/{id}/erase erases one, with its tool calls, WhatsApp messages and replies and the leads left in it; every lead they left, with its conversation; a WhatsApp sender's messages that became no conversation's turn, with their notices. It cannot be undone. Asking again erases nothing more and names the same.",
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(EraseEndUserBody) },
        success: {
          status: 200,
          description: 'what was erased, now or before',
          json: object({
            conversations: arrayOf(string(), 'the ids of the conversations they started'),
            leads: arrayOf(string(), 'the ids of the leads they left'),
            whatsapp_messages: integer('their WhatsApp messages that were no conversation’s turn'),
          }),
        },
        errors: [400],
      },
    },
  },
};
