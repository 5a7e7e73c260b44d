// Erasing an invitation (docs/personal-data.md, "Erasure"): InvitationErased, then its key is
// deleted, so the invitee's email (on the invitation, and on the email that carried its token)
// cannot be read anywhere again. It leaves the invitations list and the outbox; a pending one
// can no longer be accepted, and its email may be invited again at once. Owners and admins
// erase one at the invitee's request (`POST /api/v1/team/invitations/{id}/erase`); closing an
// account erases the invitations sent to its email, accepted or not (account-closure.ts).

import { type InvitationEraser, invitationStream, invitationSubject } from '../../domain/invitation/invitation';
import { normalizeEmail } from '../../domain/user/user';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { PersonalDataVault } from '../ports/personal-data';
import { releaseReservation } from '../reservation/reservations';
import { type Principal, actingContext } from '../session/sessions';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { INVITATIONS, type InvitationDocument } from '../../projections/invitations';
import { INVITATION_SCOPE, invitationAggregate, pendingSlot } from './invitations';

export type InvitationErasureDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies & { secrets: Pick<Secrets, 'digest'>; personalData: PersonalDataVault };

/** What an erasure answers. */
export interface InvitationErasureView {
  id: string;
  erased_at: string;
}

/**
 * Erases an invitation of the caller's organization, whatever its status (404 for an unknown
 * one or another organization's); erasing it again answers the first erasure. Read on the write
 * model: an erased invitation is in no read model.
 */
export async function eraseInvitation(deps: InvitationErasureDependencies, principal: Principal, invitationId: string, context: RequestContext): Promise<InvitationErasureView> {
  const erasedBy: InvitationEraser = principal.impersonator ?? { kind: 'user', id: principal.user_id };
  return eraseInvitationOf(deps, principal.tenant_id, invitationId, erasedBy, actingContext(principal, context));
}

/** The erasure itself, for the route above and for an account's closure. */
export async function eraseInvitationOf(deps: InvitationErasureDependencies, tenantId: string, invitationId: string, erasedBy: InvitationEraser, context: RequestContext): Promise<InvitationErasureView> {
  const stream = invitationStream(invitationId);
  // The pending slot is keyed by the email, unreadable once erased: read it first.
  const { state: before } = await loadAggregate(deps, invitationAggregate, stream);
  const result = await handleCommand(deps, invitationAggregate, stream, { type: 'EraseInvitation', data: { tenant_id: tenantId, erased_by: erasedBy } }, context);
  // Releases only this invitation's claim; a stale one is taken over by the next invitation anyway.
  if (before.status === 'pending') await releaseReservation(deps, INVITATION_SCOPE, pendingSlot(before.tenant_id, before.email), invitationId, context);
  // The saga personal_data_erasure does it too, for a process that stops right here.
  await deps.personalData.erase(invitationSubject(invitationId));
  await deps.readYourWrites(result.position);
  const erased = result.events.find((event) => event.type === 'InvitationErased');
  if (erased?.type === 'InvitationErased') return { id: invitationId, erased_at: erased.data.erased_at };
  // Erased before (a repeated request, or one that came in between): the first erasure's time.
  const { state } = await loadAggregate(deps, invitationAggregate, stream);
  if (state.status !== 'erased') throw new Error(`invitation ${invitationId}: erased, yet not erased`);
  return { id: invitationId, erased_at: state.erased_at };
}

/** Erases the invitations an account accepted (their email was the account's), in every organization; the closure's actor erases them. */
export function eraseInvitationsAcceptedBy(deps: InvitationErasureDependencies, userId: string, context: RequestContext): Promise<number> {
  return eraseInvitationsWhere(deps, { accepted_by: userId }, context);
}

/**
 * Erases every invitation sent to this email, in every organization, whatever its status: a
 * closing account's, before its email becomes unreadable (the invitations it never accepted
 * hold its email too, and nothing else ties them to it).
 */
export function eraseInvitationsSentTo(deps: InvitationErasureDependencies, email: string, context: RequestContext): Promise<number> {
  return eraseInvitationsWhere(deps, { email: normalizeEmail(email) }, context);
}

async function eraseInvitationsWhere(deps: InvitationErasureDependencies, where: Partial<Pick<InvitationDocument, 'accepted_by' | 'email'>>, context: RequestContext): Promise<number> {
  const { kind, id } = context.actor;
  const erasedBy: InvitationEraser = kind === 'user' || kind === 'admin' ? { kind, id } : { kind: 'system', id };
  const invitations = deps.readStore.collection<InvitationDocument>(INVITATIONS);
  let erased = 0;
  let cursor: string | undefined;
  do {
    const page = await invitations.find({ where, limit: 100, cursor });
    for (const invitation of page.items) {
      await eraseInvitationOf(deps, invitation.tenant_id, invitation.id, erasedBy, { ...context, tenant_id: invitation.tenant_id });
      erased += 1;
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return erased;
}
