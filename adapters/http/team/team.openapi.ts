// OpenAPI description of team invitations and membership (team/index.ts).

import { PAGE_PARAMETERS, type ApiArea, boolean, dateTime, enumOf, list, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { AcceptBody, InviteBody, SwitchBody } from './index';

/** Members invite admins and members; the super admin invites the first owner of an organization it creates. */
const INVITED_ROLE = enumOf(['owner', 'admin', 'member']);

export const teamApi: ApiArea = {
  tag: 'team',
  description: 'Invitations and membership (spec 4.10). The emailed invitation token is the credential of invite-preview and accept-invite.',
  schemas: {
    Invitation: object({
      id: string(),
      email: string(),
      role: INVITED_ROLE,
      status: enumOf(['pending', 'accepted', 'revoked', 'expired'], 'a pending invitation past its expiry (7 days) is expired'),
      expires_at: dateTime(),
      invited_by: string('the inviting user (the super admin for an owner)'),
      created_at: dateTime(),
      accepted_at: nullable(dateTime()),
      revoked_at: nullable(dateTime()),
    }),
    InvitationPreview: object({ organization_name: string(), inviter_name: nullable(string()), role: INVITED_ROLE, email: string(), expires_at: dateTime() }),
    SessionAnswer: object(
      {
        token: string('a user token for the organization: send it as `Authorization: Bearer`'),
        user: object({ id: string(), email: string(), name: string(), email_verified: boolean() }),
        tenant: object({ id: string(), name: string(), slug: string(), status: enumOf(['active', 'suspended']) }),
        role: enumOf(['owner', 'admin', 'member']),
      },
      'a new session, as the GraphQL login mutation answers it',
    ),
    TenantMembership: object({ tenant_id: string(), name: string(), slug: string(), role: enumOf(['owner', 'admin', 'member']), status: enumOf(['active', 'disabled']) }),
  },
  routes: {
    '/api/v1/team/members': {
      get: {
        summary: 'List the members of my organization',
        access: 'user',
        query: [
          { name: 'role', description: 'only members of this role', schema: enumOf(['owner', 'admin', 'member']) },
          { name: 'status', description: 'only members of this status', schema: enumOf(['active', 'disabled']) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of members', json: page(ref('Member')) },
      },
    },
    '/api/v1/team/members/{id}': {
      delete: {
        versioned: 'conditional',
        summary: 'Remove a member, or leave',
        description: 'Removing someone else needs the admin role (an owner only by an owner); anyone may remove themselves, except the last owner (409 `last_owner`).',
        access: 'user',
        success: { status: 204, description: 'removed' },
        errors: [403, 404, 409],
      },
    },
    '/api/v1/team/invite': {
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Invite someone by email',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(InviteBody) },
        description: "Each pending invitation holds a seat: past the plan's users limit the answer is 429 `quota_exceeded`.",
        success: { status: 201, description: 'the invitation (the token goes only to the email)', json: ref('Invitation') },
        errors: [409, 429],
      },
    },
    '/api/v1/team/invitations': {
      get: {
        summary: 'List invitations',
        access: 'user',
        role: 'admin',
        query: [{ name: 'status', description: 'only invitations of this status', schema: enumOf(['pending', 'accepted', 'revoked', 'expired']) }, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of invitations', json: page(ref('Invitation')) },
      },
    },
    '/api/v1/team/invitations/{id}/revoke': {
      post: {
        versioned: 'conditional',
        summary: 'Revoke a pending invitation',
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'the revoked invitation', json: ref('Invitation') },
        errors: [404, 409],
      },
    },
    '/api/v1/team/invitations/{id}/erase': {
      post: {
        summary: 'Erase an invitation',
        description:
          "For an invitee's request to have their data erased (docs/personal-data.md): the key the invitee's email is sealed under (on the invitation and on the email that carried its token) is deleted, so it cannot be read again anywhere, in the event log or by a rebuild. The invitation leaves the list and the outbox; a pending one can no longer be accepted, and the email may be invited again at once. It cannot be undone. Any invitation of the organization, whatever its status (404 `invitation_not_found` otherwise); erasing it again answers the first erasure. Closing an account erases the invitations sent to its email, accepted or not.",
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'erased', json: object({ id: string(), erased_at: dateTime('when it was first erased') }) },
        errors: [404],
      },
    },
    '/api/v1/team/accept-invite': {
      post: {
        summary: 'Accept an invitation',
        description:
          'A new user sends `name` and `password` to create their account; an existing user sends their token (`Authorization: Bearer`) or their password. The invitation must be pending and for that email.',
        access: 'optional_user',
        body: { json: schemaOfCodec(AcceptBody) },
        success: { status: 200, description: 'a session in the organization', json: ref('SessionAnswer') },
        errors: [401, 403, 404, 409, 410],
      },
    },
    '/api/v1/team/invite-preview': {
      get: {
        summary: 'What an invitation is for',
        access: 'public',
        query: [{ name: 'token', required: true, description: 'the token from the invitation email', schema: { type: 'string', minLength: 1 } }],
        success: { status: 200, description: 'the organization, role and email of the invitation', json: ref('InvitationPreview') },
        errors: [404, 409, 410],
      },
    },
    '/api/v1/team/switch-tenant': {
      post: {
        summary: 'Switch to another organization of mine',
        access: 'user',
        body: { json: schemaOfCodec(SwitchBody) },
        success: { status: 200, description: 'a session in that organization', json: ref('SessionAnswer') },
        errors: [403],
      },
    },
    '/api/v1/team/my-tenants': {
      get: { summary: 'The organizations I belong to', access: 'user', success: { status: 200, description: 'every membership of the caller', json: list(ref('TenantMembership')) } },
    },
  },
};
