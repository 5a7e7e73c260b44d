// OpenAPI description of the super-admin routes (admin/index.ts).

import { EMAIL_STATUSES } from '../../../application/admin/outbox';
import { PAGE_PARAMETERS, type ApiArea, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { LoginBody } from './index';

const EMAIL_FIELDS = {
  id: string(),
  tenant_id: nullable(string()),
  to: string(),
  subject: string(),
  kind: string('what the email is for (verification, password reset, invitation, ...)'),
  status: enumOf(EMAIL_STATUSES, 'queued, being sent, waiting for a scheduled retry, sent, kept in the outbox (no mail transport is configured: never sent), or given up after the last attempt'),
  queued_at: dateTime(),
  sent_at: nullable(dateTime()),
  provider: nullable(string()),
  last_error: nullable(string()),
  attempts: integer('attempts started'),
  last_attempt_at: nullable(dateTime('when the latest attempt started')),
  next_attempt_at: nullable(dateTime('when the next attempt is due (status retrying)')),
  abandoned_at: nullable(dateTime()),
};

export const adminApi: ApiArea = {
  tag: 'super admin',
  description: "The platform operator's API (spec 4.16), with its own token: tenant tokens are 401 here, and admin tokens on tenant routes.",
  schemas: {
    AdminLogin: object({ token: string('an admin token: send it as `Authorization: Bearer`'), admin: object({ id: string(), email: string() }) }),
    Email: object(EMAIL_FIELDS, 'an email of the outbox, without its body'),
    EmailWithText: object({ ...EMAIL_FIELDS, text: string('the body') }),
  },
  routes: {
    '/api/v1/admin/auth/login': {
      post: {
        summary: 'Log in as the super admin',
        access: 'public',
        body: { json: schemaOfCodec(LoginBody) },
        success: { status: 200, description: 'an admin token', json: ref('AdminLogin') },
        errors: [401, 429],
      },
    },
    '/api/v1/admin/emails': {
      get: {
        summary: 'List the outbox',
        access: 'admin_token',
        query: [
          { name: 'status', description: 'only emails of this status', schema: enumOf(EMAIL_STATUSES) },
          { name: 'to', description: 'only emails to this address (case-insensitive)', schema: { type: 'string' } },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of emails, newest first, never their bodies', json: page(ref('Email')) },
      },
    },
    '/api/v1/admin/emails/{id}': {
      get: { summary: 'One email with its body', access: 'admin_token', success: { status: 200, description: 'the email', json: ref('EmailWithText') }, errors: [404] },
    },
  },
};
