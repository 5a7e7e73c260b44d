// OpenAPI description of `POST /api/v1/widget/leads` (widget/leads.ts); docs/widget.md,
// "Leads and the CRM". WIDGET_AUTH_ERRORS are the refusals every visitor route of this part shares.

import { MAX_LEAD_COMPANY_LENGTH, MAX_LEAD_MESSAGE_LENGTH, MAX_LEAD_NAME_LENGTH, MAX_LEAD_PAGE_URL_LENGTH } from '../../../domain/lead/lead';
import { type ApiArea, object, schemaOfCodec, string } from '../openapi/describe';
import { LeadBody } from './leads';
import { VISITOR_HEADERS } from './widget.openapi';

export const WIDGET_AUTH_ERRORS =
  '401 `invalid_widget_token` for a missing, unknown or rotated widget token (a user token is refused too); 403 `origin_not_allowed` for a page on an origin the organization does not allow, `tenant_suspended`, `tenant_deleted`, `widget_disabled`; 400 `invalid_visitor` without a well-formed X-Widget-Visitor.';

export const widgetLeadsApi: ApiArea = {
  tag: 'widget',
  schemas: {
    CapturedLead: object({ lead_id: string('the lead; the organization’s admins list it at GET /api/v1/tenant/leads') }),
  },
  routes: {
    '/api/v1/widget/leads': {
      post: {
        summary: 'Leave contact details (a lead)',
        description: `The visitor’s lead, recorded and then sent to the organization’s CRM when one is configured and on (GET /api/v1/tenant/crm). Each field is optional and an empty one counts as not given, but an email or a phone is needed (400 \`invalid_lead\` naming \`email\`). \`name\` and \`company\` at most ${MAX_LEAD_NAME_LENGTH} and ${MAX_LEAD_COMPANY_LENGTH} characters, \`message\` at most ${MAX_LEAD_MESSAGE_LENGTH}, \`email\` an address, \`phone\` 5 to 20 digits, \`page_url\` an absolute http(s) URL of at most ${MAX_LEAD_PAGE_URL_LENGTH}: 400 \`invalid_lead\` naming the field. \`conversation_id\` must be one of the visitor’s own widget conversations (404 \`conversation_not_found\`). 403 \`widget_feature_disabled\` when the organization turned the lead form off; 429 \`rate_limited\` past WIDGET_LEADS_PER_HOUR per visitor or WIDGET_LEADS_PER_IP_PER_HOUR per client address. ${WIDGET_AUTH_ERRORS}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        body: { json: schemaOfCodec(LeadBody) },
        idempotent: true,
        success: { status: 201, description: 'the lead is recorded', json: { $ref: '#/components/schemas/CapturedLead' } },
        errors: [400, 404, 429],
      },
    },
  },
};
