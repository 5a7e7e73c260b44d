// Erasing a lead (docs/personal-data.md, "Erasure"): LeadErased, then its key is deleted, so
// what the visitor left (name, email, phone, company, message, page) cannot be read anywhere
// again; it leaves the list and a delivery to the CRM under way ends, as a deletion. The widget
// conversation it was left in holds the same visitor's words, so it is erased with it (and
// erasing that conversation erases its leads: conversation-erasure.ts). The saga
// `lead_erasure` erases the conversation again after LeadErased, for a process that stopped in
// between; both are idempotent.

import { DomainError } from '../../domain/shared/errors';
import { type LeadEvent, type LeadParty, leadStream, leadSubject } from '../../domain/lead/lead';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type ConversationErasureUseCaseDependencies, eraseConversationOf } from '../conversation/conversations';
import type { Saga } from '../sagas/saga';
import { type Principal, actingContext } from '../session/sessions';
import { type RequestContext, systemContext } from '../shared/request-context';
import { leadAggregate } from './lead-aggregate';

export const LEAD_ERASURE = 'lead_erasure';

/** What an erasure answers. */
export interface LeadErasureView {
  id: string;
  erased_at: string;
  /** The widget conversation the lead was left in, erased with it; null for none. */
  conversation_id: string | null;
}

export type LeadErasureDependencies = ConversationErasureUseCaseDependencies;

/**
 * Erases a lead and the conversation it was left in: owners and admins (the route's guard), a
 * live or deleted lead of the organization (404 otherwise); erasing again answers the first
 * erasure. Read on the write model: a deleted lead is in no read model.
 */
export async function eraseLead(deps: LeadErasureDependencies, principal: Principal, leadId: string, context: RequestContext): Promise<LeadErasureView> {
  const erasedBy = principal.impersonator ?? { kind: 'user' as const, id: principal.user_id };
  return eraseLeadOf(deps, principal.tenant_id, leadId, erasedBy, actingContext(principal, context));
}

/** The erasure itself, for the route above and for the operator (`npm run cli -- erase lead`). */
export async function eraseLeadOf(deps: LeadErasureDependencies, tenantId: string, leadId: string, erasedBy: LeadParty, context: RequestContext): Promise<LeadErasureView> {
  const stream = leadStream(leadId);
  const result = await handleCommand(deps, leadAggregate, stream, { type: 'EraseLead', data: { tenant_id: tenantId, erased_by: erasedBy } }, context);
  // The saga personal_data_erasure does it too, for a process that stops right here.
  await deps.personalData.erase(leadSubject(leadId));
  await deps.readYourWrites(result.position);
  const conversationId = await eraseConversationOfLead(deps, tenantId, leadId, context);
  const erased = result.events.find((event) => event.type === 'LeadErased');
  if (erased?.type === 'LeadErased') return { id: leadId, erased_at: erased.data.erased_at, conversation_id: conversationId };
  // Erased before (a repeated request, or one that came in between): the first erasure's time.
  const { state } = await loadAggregate(deps, leadAggregate, stream);
  if (state.status !== 'deleted' || state.erased_at === null) throw new Error(`lead ${leadId}: erased, yet no time of erasure`);
  return { id: leadId, erased_at: state.erased_at, conversation_id: conversationId };
}

/** Erases the conversation the lead was left in (read from its capture); answers its id, null when there is none of the organization. */
async function eraseConversationOfLead(deps: LeadErasureDependencies, tenantId: string, leadId: string, context: RequestContext): Promise<string | null> {
  const events = (await deps.eventStore.readStream(leadStream(leadId))) as unknown as LeadEvent[];
  const captured = events.find((event) => event.type === 'LeadCaptured');
  const conversationId = captured?.type === 'LeadCaptured' ? captured.data.conversation_id : null;
  if (conversationId === null) return null;
  try {
    await eraseConversationOf(deps, tenantId, conversationId, context);
    return conversationId;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'conversation_not_found') return null;
    throw error;
  }
}

export function leadErasureSaga(deps: LeadErasureDependencies): Saga<'LeadErased'> {
  return {
    name: LEAD_ERASURE,
    version: 1,
    filter: { kind: 'event_type', types: ['LeadErased'] },
    async handle(event) {
      const { tenant_id, lead_id } = event.data;
      await eraseConversationOfLead(deps, tenant_id, lead_id, { ...systemContext(event.metadata.correlation_id, LEAD_ERASURE, event.id), tenant_id });
    },
  };
}
