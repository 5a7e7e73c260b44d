// OpenAPI description of the caller's own sessions (me/sessions.ts).

import { PAGE_PARAMETERS, type ApiArea, boolean, dateTime, enumOf, nullable, object, page, ref, string } from '../openapi/describe';

export const meSessionsApi: ApiArea = {
  tag: 'sessions',
  description: "Sessions (spec 4.7): each token is a session that can be revoked. A member's sessions, for admins, are under the organization's members.",
  schemas: {
    Session: object({
      jti: string('the session id (the token\'s `jti`)'),
      status: enumOf(['active', 'revoked']),
      issued_at: dateTime(),
      expires_at: dateTime(),
      revoked_at: nullable(dateTime()),
      ip: nullable(string('the client IP at login')),
      user_agent: nullable(string("the client's User-Agent at login (control characters removed, at most 256 characters); null when it sent none")),
      current: boolean('whether this is the session of the token making the request'),
    }),
  },
  routes: {
    '/api/v1/me/sessions': {
      get: {
        summary: 'My sessions in the current organization',
        access: 'user',
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'a page of sessions, newest first', json: page(ref('Session')) },
      },
    },
    '/api/v1/me/sessions/{jti}': {
      delete: {
        summary: 'Revoke one of my sessions',
        description: 'Revoking the current session logs this token out.',
        access: 'user',
        success: { status: 204, description: 'revoked' },
        errors: [404],
      },
    },
  },
};
