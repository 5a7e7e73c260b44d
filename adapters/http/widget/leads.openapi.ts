// OpenAPI description of `POST /api/v1/widget/leads` (widget/leads.ts); docs/widget.md,
// "Leads and the CRM". VISITOR_HEADERS are the visitor headers every visitor route reads.

import { MAX_LEAD_COMPANY_LENGTH, MAX_LEAD_MESSAGE_LENGTH, MAX_LEAD_NAME_LENGTH, MAX_LEAD_PAGE_URL_LENGTH } from '../../../domain/lead/lead';
import { type ApiArea, type QueryParameter, object, schemaOfCodec, string } from '../openapi/describe';
import { LeadBody } from './leads';

/** The headers that say who the visitor is (widget-auth.ts). */
export const VISITOR_HEADERS: readonly QueryParameter[] = [
  {
    name: 'X-Widget-Visitor',
    description: 'the random visitor id the widget keeps in the browser: 22 to 64 characters of A-Z a-z 0-9 _ - (400 `invalid_visitor` when missing or malformed)',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{22,64}$' },
    required: true,
  },
  { name: 'X-Widget-User-Id', description: 'verified identity: the host site’s user id, as identify({user_id}) gave it', schema: { type: 'string' } },
  { name: 'X-Widget-User-Hash', description: 'verified identity: hex HMAC-SHA256 of the user id with the widget’s identity secret (401 `invalid_identity` when it does not match)', schema: { type: 'string' } },
];

export const WIDGET_AUTH_ERRORS =
  '401 `invalid_widget_token` for a missing, unknown or rotated widget token (a user token is refused too); 403 `origin_not_allowed` for a page on an origin the organization does not allow, `tenant_suspended`, `tenant_deleted`, `widget_disabled`; 400 `invalid_visitor` without a well-formed X-Widget-Visitor.';

export const widgetLeadsApi: ApiArea = {
  tag: 'widget',
  description: 'The website widget’s routes (spec 4.4): a tenant’s publishable widget token, the visitor in X-Widget-Visitor; docs/widget.md.',
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
