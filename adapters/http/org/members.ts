// Organization RBAC routes of spec 4.11 for members, roles, ownership and member sessions.
// Everything under /api/v1/org needs a user token (a widget token is 401). A member carries
// their ETag; changing their role or status honours If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { listSessions } from '../../../application/session/sessions';
import { changeMemberRole, changeMemberStatus, getMember, listMembers, revokeMemberSession, transferOwnership } from '../../../application/membership/members';
import { MemberStatus, Role } from '../../../domain/membership/membership';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { sessionView } from '../me/sessions';
import { type AuthenticatedState } from '../middleware/authenticate';
import { requireRole } from '../middleware/authorize';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const ROLES = [
  { role: 'owner', description: 'everything, including transferring ownership; at least one per organization' },
  { role: 'admin', description: 'manages members (not owners), teams, workspaces, settings, connections and the audit log' },
  { role: 'member', description: 'uses the workspaces their teams are granted' },
];

export const RoleBody = t.type({ role: Role }, 'RoleBody');
export const StatusBody = t.type({ status: MemberStatus }, 'StatusBody');
export const TransferBody = t.type({ user_id: t.string }, 'TransferBody');

function optionalEnum<A extends string>(value: unknown, codec: t.Type<A>, field: string): A | undefined {
  if (value === undefined) return undefined;
  if (!codec.is(value)) throw invalid('invalid_request', `${field}: expected ${codec.name}`, field);
  return value;
}

/** Mounted under /api/v1/org after authentication. */
export function orgMembersRouter(identity: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/roles', (ctx) => {
    ctx.body = { items: ROLES };
  });

  router.get('/members', async (ctx) => {
    const filter = { role: optionalEnum(ctx.query.role, Role, 'role'), status: optionalEnum(ctx.query.status, MemberStatus, 'status') };
    const page = await listMembers(identity, ctx.state.principal.tenant_id, Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)), pageQuery(ctx.query));
    ctx.body = page;
  });

  router.get('/members/:id', async (ctx) => {
    answerVersioned(ctx, await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.put('/members/:id/role', requireRole('admin'), async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { role } = decodeBody(RoleBody, ctx.request.body);
    await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id);
    await changeMemberRole(identity, ctx.state.principal, ctx.params.id, role, requestContextOf(ctx), preconditions);
    answerVersioned(ctx, await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.put('/members/:id/status', requireRole('admin'), async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { status } = decodeBody(StatusBody, ctx.request.body);
    await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id);
    await changeMemberStatus(identity, ctx.state.principal, ctx.params.id, status, requestContextOf(ctx), preconditions);
    answerVersioned(ctx, await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.post('/transfer-ownership', requireRole('owner'), async (ctx) => {
    const { user_id } = decodeBody(TransferBody, ctx.request.body);
    await getMember(identity, ctx.state.principal.tenant_id, user_id);
    await transferOwnership(identity, ctx.state.principal, user_id, requestContextOf(ctx));
    ctx.body = { owner: (await getMember(identity, ctx.state.principal.tenant_id, user_id)).value };
  });

  router.get('/members/:id/sessions', requireRole('admin'), async (ctx) => {
    await getMember(identity, ctx.state.principal.tenant_id, ctx.params.id);
    const page = await listSessions(identity, ctx.params.id, ctx.state.principal.tenant_id, pageQuery(ctx.query));
    ctx.body = { items: page.items.map((session) => sessionView(session, ctx.state.principal.jti)), next_cursor: page.next_cursor };
  });

  router.delete('/members/:id/sessions/:jti', requireRole('admin'), async (ctx) => {
    await revokeMemberSession(identity, ctx.state.principal, ctx.params.id, ctx.params.jti, requestContextOf(ctx));
    ctx.status = 204;
  });

  return router;
}
