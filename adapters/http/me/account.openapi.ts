// OpenAPI description of closing one's own account (me/account.ts).

import { type ApiArea, arrayOf, dateTime, object, schemaOfCodec, string } from '../openapi/describe';
import { CloseAccountBody } from './account';

export const meAccountApi: ApiArea = {
  tag: 'account',
  description: 'The caller’s own account.',
  routes: {
    '/api/v1/me/close': {
      post: {
        summary: 'Close my account',
        description:
          'For a person who wants their account gone (docs/personal-data.md, "Closing an account"). Checked in full before anything is written: `password` is the account’s (403 `invalid_password`; past RATE_LIMIT_PER_EMAIL wrong ones in a window, 429 `rate_limited` with Retry-After); not while impersonated (403 `impersonation_forbidden`); 409 `last_owner` where the caller is the last owner of an organization with other members (transfer ownership first); the organizations the caller is the only member of are deleted with the account, only with `delete_organizations: true` (409 `organizations_would_be_deleted` otherwise, naming them) and not while one has a subscription that renews (409 `subscription_active`). Then the account is closed for good: its email and name erased, every other organization left, every session revoked (this token included), the invitations sent to its email erased, the email free to sign up again.',
        access: 'user',
        body: { json: schemaOfCodec(CloseAccountBody) },
        success: {
          status: 200,
          description: 'closed',
          json: object({ closed_at: dateTime(), deleted_organizations: arrayOf(string(), 'the organizations deleted with the account (their ids)') }),
        },
        errors: [403, 409, 429],
      },
    },
  },
};
