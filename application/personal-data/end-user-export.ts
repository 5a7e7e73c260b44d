// What the organization holds of one of its end users, for their right of access
// (docs/personal-data.md, "An end user's data, and erasing it"), named as for their erasure: the
// host site's user id of a verified widget visitor, or a WhatsApp number. Every live conversation
// they started, with its messages, and every lead they left that is still listed. Deleted and
// erased ones are not shown (a deleted conversation's messages are gone from the read models).
// Owners and admins (the route's guard).

import { CONVERSATIONS, CONVERSATION_MESSAGES, type ConversationDocument, type ConversationMessageDocument } from '../../projections/conversations';
import { LEAD_ORIGINS, type LeadOriginDocument } from '../../projections/lead-origins';
import { LEADS, type LeadDocument } from '../../projections/leads';
import { type ConversationView, type MessageView, conversationView, messageView } from '../conversation/conversations';
import { type LeadView, leadView } from '../lead/leads';
import type { Secrets } from '../ports/identity';
import type { Principal } from '../session/sessions';
import type { Clock } from '../ports/clock';
import type { ReadModelDependencies } from '../shared/read-models';
import { everyDocument } from '../shared/every-document';
import { type EndUser, endUserPartyIds } from './end-users';

/** At most this many conversations, and messages of each, in one export: past them, `truncated`. */
export const EXPORT_MAX_CONVERSATIONS = 1000;
export const EXPORT_MAX_MESSAGES = 5000;

export interface EndUserExport {
  end_user: EndUser;
  exported_at: string;
  conversations: Array<ConversationView & { messages: MessageView[] }>;
  leads: LeadView[];
  /** Whether a limit cut it short (EXPORT_MAX_CONVERSATIONS conversations, EXPORT_MAX_MESSAGES messages of one). */
  truncated: boolean;
}

export type EndUserExportDependencies = ReadModelDependencies & { secrets: Pick<Secrets, 'digest'>; clock: Clock };

export async function exportEndUser(deps: EndUserExportDependencies, principal: Pick<Principal, 'tenant_id'>, endUser: EndUser): Promise<EndUserExport> {
  const tenantId = principal.tenant_id;
  const parties = endUserPartyIds(deps.secrets, tenantId, endUser);
  let truncated = false;
  const started = await everyDocument(
    deps.readStore.collection<ConversationDocument>(CONVERSATIONS),
    { where: { started_by_end_user_id: { in: parties }, tenant_id: tenantId, deleted: false }, sort: { field: 'started_at', direction: 'asc' } },
    EXPORT_MAX_CONVERSATIONS,
  );
  truncated ||= started.more;
  const conversations: EndUserExport['conversations'] = [];
  for (const doc of started.docs) {
    const messages = await everyDocument(
      deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES),
      { where: { conversation_id: doc.id }, sort: { field: 'seq', direction: 'asc' } },
      EXPORT_MAX_MESSAGES,
    );
    truncated ||= messages.more;
    conversations.push({ ...conversationView(doc), messages: messages.docs.map(messageView) });
  }
  const origins = await everyDocument(deps.readStore.collection<LeadOriginDocument>(LEAD_ORIGINS), { where: { visitor_id: { in: parties } } });
  const leadDocs = await Promise.all(origins.docs.filter((origin) => origin.tenant_id === tenantId).map((origin) => deps.readStore.collection<LeadDocument>(LEADS).get(origin.id)));
  // A deleted or erased lead is no longer listed.
  const leads = leadDocs.flatMap((doc) => (doc === null ? [] : [leadView(doc)]));
  return { end_user: endUser, exported_at: deps.clock.now().toISOString(), conversations, leads, truncated };
}
