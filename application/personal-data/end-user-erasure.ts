// Erasing everything the organization holds of one of its end users (docs/personal-data.md, "An end
// user's data, and erasing it"), at their request, by who they are to the organization: the host
// site's user id of a widget visitor it vouched for, or a WhatsApp sender's number. The platform
// knows them only by keyed digests of those (and, for what was recorded before ids became digests,
// by the id of old), so the request names them and the digests are made here:
// - every conversation they started (widget or WhatsApp, live or deleted) is erased as
//   POST /api/v1/conversations/{id}/erase erases one, with what it reached (its tool calls,
//   WhatsApp messages and replies, the leads left in it);
// - every lead they left is erased, with the conversation it was left in;
// - a WhatsApp sender's messages that became no conversation's turn, with their notices.
// Owners and admins (the route's guard); the answer names what was erased, and asking again
// erases nothing more (each erasure is idempotent) and names the same.

import { DomainError } from '../../domain/shared/errors';
import type { LeadParty } from '../../domain/lead/lead';
import { CONVERSATIONS, type ConversationDocument } from '../../projections/conversations';
import { LEAD_ORIGINS, type LeadOriginDocument } from '../../projections/lead-origins';
import { eraseStrayWhatsAppMessages } from '../conversation/conversation-erasure';
import { type ConversationErasureUseCaseDependencies, eraseConversationOf } from '../conversation/conversations';
import { eraseLeadOf } from '../lead/lead-erasure';
import type { Collection, Where } from '../ports/read-store';
import { type Principal, actingContext } from '../session/sessions';
import type { RequestContext } from '../shared/request-context';
import { everyDocument } from '../shared/every-document';
import { type EndUser, endUserPartyIds } from './end-users';

export type { EndUser } from './end-users';

/** What an end user's erasure erased (now, or before). */
export interface EndUserErasureView {
  conversations: string[];
  leads: string[];
  /** A WhatsApp sender's messages that were no conversation's turn. */
  whatsapp_messages: number;
}

/** The ids of every document of the organization one of these parties made (an id of old may be another organization's too). */
async function idsBy<Doc extends { id: string; tenant_id: string }>(collection: Collection<Doc>, field: string, parties: readonly string[], tenantId: string): Promise<string[]> {
  const where: Where = { [field]: { in: parties } };
  const { docs } = await everyDocument(collection, { where });
  return docs.filter((doc) => doc.tenant_id === tenantId).map((doc) => doc.id);
}

/** The erasure, for an owner or admin of the organization (the route's guard). */
export async function eraseEndUser(deps: ConversationErasureUseCaseDependencies, principal: Principal, endUser: EndUser, context: RequestContext): Promise<EndUserErasureView> {
  const erasedBy: LeadParty = principal.impersonator ?? { kind: 'user', id: principal.user_id };
  return eraseEndUserOf(deps, principal.tenant_id, endUser, erasedBy, actingContext(principal, context));
}

/** The erasure itself, for the route above and for the operator (`npm run cli -- erase end-user`). */
export async function eraseEndUserOf(deps: ConversationErasureUseCaseDependencies, tenantId: string, endUser: EndUser, erasedBy: LeadParty, acting: RequestContext): Promise<EndUserErasureView> {
  const parties = endUserPartyIds(deps.secrets, tenantId, endUser);
  // Their conversations first: each takes the leads left in it along.
  const conversations = await idsBy(deps.readStore.collection<ConversationDocument>(CONVERSATIONS), 'started_by_end_user_id', parties, tenantId);
  for (const conversationId of conversations) await eraseConversationOf(deps, tenantId, conversationId, acting);
  const leads = await idsBy(deps.readStore.collection<LeadOriginDocument>(LEAD_ORIGINS), 'visitor_id', parties, tenantId);
  for (const leadId of leads) {
    try {
      await eraseLeadOf(deps, tenantId, leadId, erasedBy, acting);
    } catch (error) {
      // A lead whose capture another process has not finished recording is not there yet.
      if (!(error instanceof DomainError && error.code === 'lead_not_found')) throw error;
    }
  }
  const stray = 'whatsapp_number' in endUser ? await eraseStrayWhatsAppMessages(deps, tenantId, parties, Number.MAX_SAFE_INTEGER, acting) : { messages: 0 };
  return { conversations, leads, whatsapp_messages: stray.messages };
}
