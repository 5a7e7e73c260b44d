// Read model `knowledge_gap_digests`: one document per organization and week whose
// knowledge-gap digest was opened (domain/knowledge-gap-digest), id `<tenant id>:<week>`. The
// weekly saga's due pass reads the open ones whose week is over (`due_at` set only while open).

import { type KnowledgeGapDigestEvent, knowledgeGapDigestEvents, weekBounds } from '../domain/knowledge-gap-digest/knowledge-gap-digest';
import { documentProjection } from './document-projection';

export interface KnowledgeGapDigestDocument {
  id: string;
  tenant_id: string;
  week: number;
  /** When the week ends (ISO); null once closed. */
  due_at: string | null;
  status: 'open' | 'closed';
  questions: number | null;
  recipients: number | null;
  closed_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const KNOWLEDGE_GAP_DIGESTS = 'knowledge_gap_digests';

export const knowledgeGapDigestId = (tenantId: string, week: number): string => `${tenantId}:${week}`;

export const knowledgeGapDigestsProjection = documentProjection<KnowledgeGapDigestEvent['type'], KnowledgeGapDigestDocument>({
  name: 'knowledge_gap_digests',
  version: 1,
  collection: { name: KNOWLEDGE_GAP_DIGESTS, indexes: [{ field: 'due_at', sparse: true }] },
  handles: knowledgeGapDigestEvents.types,
  documentId: (event) => knowledgeGapDigestId(event.data.tenant_id, event.data.week),
  evolve(current, event) {
    switch (event.type) {
      case 'KnowledgeGapDigestOpened': {
        const { tenant_id, week } = event.data;
        return { id: knowledgeGapDigestId(tenant_id, week), tenant_id, week, due_at: weekBounds(week).end, status: 'open', questions: null, recipients: null, closed_at: null };
      }
      case 'KnowledgeGapDigestClosed': {
        if (current === null) return null;
        const { questions, recipients, closed_at } = event.data;
        return { ...current, due_at: null, status: 'closed', questions, recipients, closed_at };
      }
    }
  },
});
