// OpenAPI description of the organization's members, roles, ownership and member sessions
// (org/members.ts).

import { PAGE_PARAMETERS, type ApiArea, dateTime, enumOf, list, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { RoleBody, StatusBody, TransferBody } from './members';

const ROLE = enumOf(['owner', 'admin', 'member']);
const STATUS = enumOf(['active', 'disabled']);

export const orgMembersApi: ApiArea = {
  tag: 'organization',
  description: 'Organization RBAC (spec 4.11): members, roles, teams, workspaces, audit log. A widget or admin token is 401 here.',
  schemas: {
    Member: object({ user_id: string(), email: nullable(string()), name: nullable(string()), role: ROLE, status: STATUS, joined_at: dateTime() }),
    RoleDescription: object({ role: ROLE, description: string() }),
  },
  routes: {
    '/api/v1/org/roles': {
      get: { summary: 'The roles and what each may do', access: 'user', success: { status: 200, description: 'every role', json: list(ref('RoleDescription')) } },
    },
    '/api/v1/org/members': {
      get: {
        summary: 'List members',
        access: 'user',
        query: [
          { name: 'role', description: 'only members of this role', schema: ROLE },
          { name: 'status', description: 'only members of this status', schema: STATUS },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of members', json: page(ref('Member')) },
      },
    },
    '/api/v1/org/members/{id}': {
      get: { versioned: 'read', summary: 'One member', access: 'user', success: { status: 200, description: 'the member', json: ref('Member') }, errors: [404] },
    },
    '/api/v1/org/members/{id}/role': {
      put: {
        versioned: 'conditional',
        summary: "Change a member's role",
        description: 'Only an owner changes an owner; ownership itself moves only through transfer-ownership; the last owner cannot be demoted (409 `last_owner`).',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(RoleBody) },
        success: { status: 200, description: 'the member after the change', json: ref('Member') },
        errors: [404, 409],
      },
    },
    '/api/v1/org/members/{id}/status': {
      put: {
        versioned: 'conditional',
        summary: 'Enable or disable a member',
        description: "Disabling ends the member's sessions: their tokens stop working at once. Nobody changes their own status; the last owner cannot be disabled (409 `last_owner`).",
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(StatusBody) },
        success: { status: 200, description: 'the member after the change', json: ref('Member') },
        errors: [404, 409],
      },
    },
    '/api/v1/org/transfer-ownership': {
      post: {
        summary: 'Transfer ownership to another member',
        description: 'The caller becomes an admin; the target, who must be active, becomes the owner.',
        access: 'user',
        role: 'owner',
        body: { json: schemaOfCodec(TransferBody) },
        success: { status: 200, description: 'the new owner', json: object({ owner: ref('Member') }) },
        errors: [404, 409],
      },
    },
    '/api/v1/org/members/{id}/sessions': {
      get: {
        summary: "A member's sessions",
        access: 'user',
        role: 'admin',
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'a page of sessions, newest first', json: page(ref('Session')) },
        errors: [404],
      },
    },
    '/api/v1/org/members/{id}/sessions/{jti}': {
      delete: {
        summary: "Revoke a member's session",
        description: "Only an owner ends an owner's session (403 `owner_protected`).",
        access: 'user',
        role: 'admin',
        success: { status: 204, description: 'revoked' },
        errors: [404],
      },
    },
  },
};
