// OpenAPI description of `GET /tenant/leads`, `DELETE /tenant/leads/{id}` and `POST /tenant/leads/{id}/erase` (tenant/leads.ts); docs/widget.md, "Leads and the CRM".

import { LEAD_CRM_STATUSES } from '../../../application/lead/leads';
import { CRM_KINDS } from '../../../domain/crm-config/crm-config';
import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, dateTime, enumOf, integer, nullable, object, page, ref, string } from '../openapi/describe';

const TIME_BOUND = (name: 'from' | 'to', side: string): QueryParameter => ({
  name,
  description: `${side} bound on \`captured_at\`, included: an ISO 8601 time, or a day (YYYY-MM-DD, UTC) standing for its ${name === 'from' ? 'first' : 'last'} instant; anything else is 400 naming it`,
  schema: { type: 'string' },
});

export const tenantLeadsApi: ApiArea = {
  tag: 'tenant',
  schemas: {
    Lead: object({
      id: string(),
      name: nullable(string()),
      email: nullable(string()),
      phone: nullable(string()),
      company: nullable(string()),
      message: nullable(string()),
      page_url: nullable(string('the page the visitor left it on')),
      conversation_id: nullable(string('the visitor’s widget conversation it came from')),
      source: enumOf(['widget']),
      visitor: object({ kind: string('end_user'), id: string('the visitor as conversations name them') }),
      verified_user_id: nullable(string("the host site's user id of a visitor it vouched for (identify() with a signed user id); null for an anonymous visitor")),
      captured_at: dateTime(),
      crm_status: enumOf(LEAD_CRM_STATUSES, 'not_sent (no CRM was on when it came in), pending, retrying (the next attempt is at crm.next_attempt_at), sent, failed (given up after the last attempt, or the CRM was turned off)'),
      crm: nullable({
        ...object({
          kind: enumOf(CRM_KINDS),
          attempts: integer('attempts started'),
          last_status_code: nullable(integer('the CRM’s HTTP status of the latest answer; null when none came')),
          last_error: nullable(string('why the latest attempt failed, with the start of the CRM’s answer')),
          record_id: nullable(string('the id the CRM gave the contact or lead, when it said')),
          requested_at: nullable(dateTime()),
          last_attempt_at: nullable(dateTime()),
          next_attempt_at: nullable(dateTime()),
          sent_at: nullable(dateTime()),
          failed_at: nullable(dateTime()),
        }),
        description: 'the delivery to the CRM; null when not sent anywhere',
      }),
    }),
  },
  routes: {
    '/api/v1/tenant/leads': {
      get: {
        summary: 'Leads the widget’s visitors left',
        description: 'Every lead of the organization, newest first, with how its delivery to the CRM stands. Failed attempts are retried with exponential back-off (CRM_DELIVERY_MAX_ATTEMPTS); then the lead is `failed`.',
        access: 'user',
        role: 'admin',
        query: [{ name: 'crm_status', description: `one of ${LEAD_CRM_STATUSES.join(', ')}`, schema: enumOf(LEAD_CRM_STATUSES) }, TIME_BOUND('from', 'lower'), TIME_BOUND('to', 'upper'), ...PAGE_PARAMETERS],
        success: { status: 200, description: 'leads, newest first', json: page(ref('Lead')) },
      },
    },
    '/api/v1/tenant/leads/{id}': {
      delete: {
        summary: 'Delete a lead',
        description:
          'The lead leaves the list and is found by nothing more; a delivery to the CRM still under way ends there (`LeadCrmDeliveryAbandoned`, "the lead was deleted"), though an attempt already in flight may reach the CRM. The event log keeps what was captured (docs/personal-data.md). 404 `lead_not_found` for another organization\'s lead, an unknown one, or one deleted already.',
        access: 'user',
        role: 'admin',
        success: { status: 204, description: 'deleted' },
        errors: [404],
      },
    },
    '/api/v1/tenant/leads/{id}/erase': {
      post: {
        summary: 'Erase a lead',
        description:
          "For a person's request to have their data erased (docs/personal-data.md): the key its captured fields (name, email, phone, company, message, page) are sealed under is deleted, so they cannot be read again anywhere, in the event log or by a rebuild; the lead is deleted too (a delivery to the CRM still under way ends; what the CRM received is the CRM's to erase), and the widget conversation it was left in is erased with it (POST /api/v1/conversations/{id}/erase: the same visitor's words). It cannot be undone. A live or deleted lead of the organization (404 `lead_not_found` otherwise); erasing it again answers the first erasure.",
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'erased', json: object({ id: string(), erased_at: dateTime('when it was first erased'), conversation_id: nullable(string('the widget conversation the lead was left in, erased with it; null for none')) }) },
        errors: [404],
      },
    },
  },
};
