// OpenAPI description of `POST /tenant/end-users/erase` (tenant/end-users.ts); docs/personal-data.md, "Erasing an end user".

import { type ApiArea, arrayOf, integer, object, schemaOfCodec, string } from '../openapi/describe';
import { EraseEndUserBody } from './end-users';

export const tenantEndUsersApi: ApiArea = {
  tag: 'tenant',
  schemas: {},
  routes: {
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
