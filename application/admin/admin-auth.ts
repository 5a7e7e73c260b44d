// Super-admin identity: bootstrapped from the environment, logged in with its own token
// audience, so tenant tokens are refused by admin routes and admin tokens by tenant routes.

import { type AdminCommand, type AdminEvent, type AdminState, adminDecider, adminEvents, adminStream } from '../../domain/admin/admin';
import { DomainError } from '../../domain/shared/errors';
import { normalizeEmail } from '../../domain/user/user';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { DomainEventStore } from '../ports/domain-event-store';
import type { PasswordHasher, Secrets, TokenService } from '../ports/identity';
import type { ReadModelDependencies } from '../shared/read-models';
import { type SessionDependencies, signSessionToken } from '../session/sessions';
import { type ReservationDependencies, claimReservation, reservationHolder } from '../reservation/reservations';
import { type RequestContext, systemContext } from '../shared/request-context';

export const adminAggregate: Aggregate<AdminCommand, AdminEvent, AdminState> = { decider: adminDecider, events: adminEvents };
const ADMIN_EMAIL_SCOPE = 'admin_email';

export interface AdminPrincipal {
  kind: 'admin';
  admin_id: string;
  email: string;
  jti: string;
}

function adminIdByEmail(deps: Pick<ReservationDependencies, 'eventStore' | 'secrets'>, email: string): Promise<string | null> {
  return reservationHolder(deps, ADMIN_EMAIL_SCOPE, normalizeEmail(email));
}

/**
 * Makes sure the configured super admin exists with the configured password: created on the
 * first start, its password hash replaced when the environment's password changes.
 */
export async function bootstrapSuperAdmin(deps: ReservationDependencies & { passwords: PasswordHasher }, email: string, password: string): Promise<string> {
  const context = systemContext(deps.ids.newId(), 'bootstrap');
  const normalized = normalizeEmail(email);
  let adminId = await adminIdByEmail(deps, normalized);
  if (!adminId) {
    adminId = deps.ids.newId();
    await claimReservation(deps, ADMIN_EMAIL_SCOPE, normalized, adminId, context);
    await handleCommand(deps, adminAggregate, adminStream(adminId), { type: 'CreateAdmin', data: { admin_id: adminId, email: normalized, password_hash: await deps.passwords.hash(password) } }, context);
    return adminId;
  }
  const { state } = await loadAggregate(deps, adminAggregate, adminStream(adminId));
  if (state.status === 'active' && !(await deps.passwords.verify(password, state.password_hash))) {
    await handleCommand(deps, adminAggregate, adminStream(adminId), { type: 'ChangeAdminPassword', data: { password_hash: await deps.passwords.hash(password) } }, context);
  }
  return adminId;
}

export async function adminLogin(deps: SessionDependencies & { secrets: Pick<Secrets, 'digest'>; passwords: Pick<PasswordHasher, 'verify'> }, email: string, password: string, context: RequestContext): Promise<{ token: string; admin: { id: string; email: string } }> {
  const rejected = new DomainError('unauthorized', 'invalid_credentials', 'email or password is wrong');
  const adminId = await adminIdByEmail(deps, email);
  const { state } = adminId ? await loadAggregate(deps, adminAggregate, adminStream(adminId)) : { state: { status: 'absent' } as AdminState };
  if (state.status !== 'active' || !(await deps.passwords.verify(password, state.password_hash))) throw rejected;
  const token = await signSessionToken(
    deps,
    { user_id: state.admin_id, tenant_id: null, role: 'super_admin', audience: 'admin', actor: { kind: 'admin', id: state.admin_id } },
    context,
  );
  return { token, admin: { id: state.admin_id, email: state.email } };
}

export async function authenticateAdminToken(deps: ReadModelDependencies & { eventStore: DomainEventStore; tokens: Pick<TokenService, 'verify'> }, token: string): Promise<AdminPrincipal> {
  const refused = new DomainError('unauthorized', 'invalid_token', 'an admin token is required');
  const claims = await deps.tokens.verify(token, 'admin');
  if (!claims) throw refused;
  const session = await deps.readStore.collection<SessionDocument>(SESSIONS).get(claims.jti);
  if (!session || session.audience !== 'admin' || session.status !== 'active') throw new DomainError('unauthorized', 'session_revoked', 'this session has been revoked; log in again');
  const { state } = await loadAggregate(deps, adminAggregate, adminStream(claims.user_id));
  if (state.status !== 'active') throw refused;
  return { kind: 'admin', admin_id: state.admin_id, email: state.email, jti: claims.jti };
}
