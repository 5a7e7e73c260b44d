// Team invitations and membership routes of spec 4.10 under /api/v1/team. Authentication is
// per route: invite-preview and accept-invite are public (the emailed token is the credential),
// everything else needs a user token (a widget token is 401), admin routes the admin role.
// Inviting honours Idempotency-Key; an invitation's answers carry its ETag, revoking honours
// If-Match, and so does removing a member.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { SessionResult } from '../../../application/session/sessions';
import { eraseInvitation } from '../../../application/invitation/invitation-erasure';
import { acceptInvitation, inviteMember, listInvitations, myTenants, previewInvitation, revokeInvitation, switchTenant } from '../../../application/invitation/invitations';
import { getMember, listMembers, removeMember } from '../../../application/membership/members';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { InvitedRole } from '../../../domain/invitation/invitation';
import { MemberStatus, Role } from '../../../domain/membership/membership';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { authenticateUserRecordingDenials, requireRole } from '../middleware/authorize';
import { pageQuery } from '../pagination';
import { bearerToken, requestContextOf } from '../request-context';

export const InviteBody = t.type({ email: t.string, role: InvitedRole }, 'InviteBody');
export const AcceptBody = t.type(
  { token: NonEmptyTrimmed, name: t.union([t.string, t.undefined]), password: t.union([t.string, t.undefined]) },
  'AcceptInviteBody',
);
export const SwitchBody = t.type({ tenant_id: NonEmptyTrimmed }, 'SwitchTenantBody');
const InvitationStatusFilter = t.keyof({ pending: null, accepted: null, revoked: null, expired: null }, 'InvitationStatus');

function optionalEnum<A extends string>(value: unknown, codec: t.Type<A>, field: string): A | undefined {
  if (value === undefined) return undefined;
  if (!codec.is(value)) throw invalid('invalid_request', `${field}: expected ${codec.name}`, field);
  return value;
}

/** The session answer of accept-invite and switch-tenant: the shape of the login mutation. */
const sessionBody = (session: SessionResult) => ({
  token: session.token,
  user: { id: session.user.id, email: session.user.email, name: session.user.name, email_verified: session.user.email_verified },
  tenant: { id: session.tenant.id, name: session.tenant.name, slug: session.tenant.slug, status: session.tenant.status },
  role: session.role,
});

export function teamRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/team' });
  const user = [authenticateUserRecordingDenials(identity, denials)];
  const admin = [...user, requireRole('admin')];

  router.get('/members', ...user, async (ctx) => {
    const filter = { role: optionalEnum(ctx.query.role, Role, 'role'), status: optionalEnum(ctx.query.status, MemberStatus, 'status') };
    ctx.body = await listMembers(identity, ctx.state.principal.tenant_id, Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)), pageQuery(ctx.query));
  });

  router.delete('/members/:id', ...user, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id);
    await removeMember(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditions);
    ctx.status = 204;
  });

  router.post('/invite', ...admin, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(InviteBody, ctx.request.body);
    answerVersioned(ctx, await inviteMember(identity, ctx.state.principal, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) }));
    ctx.status = 201;
  });

  router.get('/invitations', ...admin, async (ctx) => {
    const status = optionalEnum(ctx.query.status, InvitationStatusFilter, 'status');
    ctx.body = await listInvitations(identity, ctx.state.principal.tenant_id, status ? { status } : {}, pageQuery(ctx.query));
  });

  router.post('/invitations/:id/revoke', ...admin, async (ctx) => {
    answerVersioned(ctx, await revokeInvitation(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx)));
  });

  router.post('/invitations/:id/erase', ...admin, async (ctx) => {
    ctx.body = await eraseInvitation(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
  });

  router.post('/accept-invite', async (ctx) => {
    const body = decodeBody(AcceptBody, ctx.request.body);
    ctx.body = sessionBody(await acceptInvitation(identity, body, bearerToken(ctx), requestContextOf(ctx)));
  });

  router.get('/invite-preview', async (ctx) => {
    const token = ctx.query.token;
    if (typeof token !== 'string' || !NonEmptyTrimmed.is(token)) throw invalid('invalid_request', 'token: expected the invitation token', 'token');
    ctx.body = await previewInvitation(identity, token);
  });

  router.post('/switch-tenant', ...user, async (ctx) => {
    const { tenant_id } = decodeBody(SwitchBody, ctx.request.body);
    ctx.body = sessionBody(await switchTenant(identity, ctx.state.principal, tenant_id, requestContextOf(ctx)));
  });

  router.get('/my-tenants', ...user, async (ctx) => {
    ctx.body = { items: await myTenants(identity, ctx.state.principal.user_id) };
  });

  return router;
}
