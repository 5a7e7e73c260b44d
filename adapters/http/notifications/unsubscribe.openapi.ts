// OpenAPI description of the one-click unsubscribe link (notifications/unsubscribe.ts).

import { type ApiArea, type QueryParameter, type Schema, boolean, enumOf, object, ref, string } from '../openapi/describe';

const PAGE = { type: 'text/html', schema: { type: 'string' } as Schema };
const TOKEN: QueryParameter = {
  name: 'token',
  description: 'the token of the link, as the email gives it; one the platform did not make is 400 `invalid_unsubscribe_link` (429 past 20 a minute from one address)',
  schema: { type: 'string', minLength: 1 },
  required: true,
};

/** `{code, message}`, or a page that says it for a browser. */
const ERROR_ANSWERS = {
  '400': { description: 'no token (`invalid_request`), or one the platform did not make (`invalid_unsubscribe_link`); `field` is `token`', json: ref('Error'), content: PAGE },
  '404': { description: 'the person is no longer in the organization, or the organization is deleted (`not_found`)', json: ref('Error'), content: PAGE },
  '429': {
    description: 'more than 20 wrong tokens a minute from the caller’s address (`rate_limited`); a right one is never refused',
    json: ref('Error'),
    content: PAGE,
    headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
  },
};

export const unsubscribeApi: ApiArea = {
  tag: 'notifications',
  schemas: {
    UnsubscribeLink: object({
      organization: string('the organization whose emails the link is about'),
      preference: enumOf(['orchestration_alerts', 'handoff_failures', 'crm_failures', 'knowledge_gaps'], 'the notification preference the link turns off (docs/notifications.md)'),
      emails: string('what those emails are about, in words'),
      unsubscribed: boolean('whether the person has turned them off'),
    }),
  },
  routes: {
    '/notifications/unsubscribe': {
      get: {
        summary: 'What an unsubscribe link turns off',
        description:
          'The link in the text of an email a person may do without (docs/notifications.md, "Unsubscribe links"). A browser gets a page that names the organization and the emails and asks, with a button that POSTs; every other client the JSON. It changes nothing: a mail scanner following the link unsubscribes nobody.',
        access: 'public',
        query: [TOKEN],
        success: { status: 200, description: 'what the link turns off (a page for a browser)', json: ref('UnsubscribeLink'), content: PAGE },
        otherAnswers: ERROR_ANSWERS,
      },
      post: {
        summary: 'Unsubscribe (one click)',
        description:
          'Turns the link’s notification preference off for its person in its organization, as `PATCH /api/v1/me/notifications` would, recorded as theirs. The List-Unsubscribe URL of the email (RFC 8058): a mail client POSTs `List-Unsubscribe=One-Click` (form-encoded or multipart; the body is optional and not read). Already off: the same answer, nothing recorded.',
        access: 'public',
        query: [TOKEN],
        body: { raw: ['application/x-www-form-urlencoded', 'multipart/form-data'], description: '`List-Unsubscribe=One-Click`, or nothing (at most 4 KiB)' },
        success: { status: 200, description: 'unsubscribed (a page for a browser)', json: ref('UnsubscribeLink'), content: PAGE },
        otherAnswers: ERROR_ANSWERS,
      },
    },
  },
};
