// Saga `knowledge_gap_emails`: once a week is over, each organization whose assistant answered
// questions without the knowledge base that week (no relevant passage) emails its owners and
// admins the week's unanswered questions, counted as asked alike, the most asked first: what to
// write a document about. The week's first such answer opens the week's digest
// (domain/knowledge-gap-digest); the due pass closes it once the week (Monday to Sunday, UTC)
// and a grace are over, reading the questions then (those of conversations deleted meanwhile
// are gone). A week whose questions are all gone emails nobody. On by default; a person turns it
// off with their notification preference `knowledge_gaps` or the email's one-click link. A
// suspended or deleted organization is told nothing.

import {
  type KnowledgeGapDigestCommand,
  type KnowledgeGapDigestEvent,
  type KnowledgeGapDigestState,
  knowledgeGapDigestDecider,
  knowledgeGapDigestEvents,
  knowledgeGapDigestStream,
  weekBounds,
  weekOf,
} from '../../domain/knowledge-gap-digest/knowledge-gap-digest';
import { KNOWLEDGE_GAP_DIGESTS, type KnowledgeGapDigestDocument } from '../../projections/knowledge-gap-digests';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type Aggregate, handleCommand } from '../command-handling/handle-command';
import { type NotificationEmailDependencies, emailEach, turnOffForYourself } from '../notification/notification-emails';
import { ownersAndAdminsWanting } from '../notification/notification-preferences';
import type { Saga } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { systemContext } from '../shared/request-context';
import { type UnansweredQuestionSummary, summarizeUnansweredQuestions } from './unanswered-questions';

export const KNOWLEDGE_GAP_EMAILS = 'knowledge_gap_emails';
/** How long after its week a digest waits, so that the week's last answers are in the read model it reads. */
export const KNOWLEDGE_GAP_GRACE_MS = 5 * 60_000;
/** Most groups of questions an email lists. */
const LISTED = 10;

const knowledgeGapDigestAggregate: Aggregate<KnowledgeGapDigestCommand, KnowledgeGapDigestEvent, KnowledgeGapDigestState> = {
  decider: knowledgeGapDigestDecider,
  events: knowledgeGapDigestEvents,
};

export interface KnowledgeGapEmailDependencies extends NotificationEmailDependencies, ReadModelDependencies {}

/** The email of a week's unanswered questions for an organization. */
export function knowledgeGapEmailOf(week: number, organization: string, summary: UnansweredQuestionSummary, unsubscribeLink: string | null): { subject: string; text: string } {
  const { start, end } = weekBounds(week);
  const lastDay = new Date(Date.parse(end) - 1).toISOString().slice(0, 10);
  const span = `${start.slice(0, 10)} to ${lastDay}`;
  const count = summary.questions;
  const asked = `${count}${summary.truncated ? '+' : ''} ${count === 1 ? 'question' : 'questions'}`;
  const listed = summary.items.map((group) => `- "${group.question}"${group.count > 1 ? ` (asked ${group.count} times)` : ''}`);
  const more = summary.items.length === LISTED ? '\nAnd others: the whole list is below.' : '';
  const query = `from=${start.slice(0, 10)}&to=${lastDay}`;
  return {
    subject: `[${organization}] ${asked} your assistant could not answer from the knowledge base (${span})`,
    text: [
      `From ${span} (UTC), the assistant of ${organization} found nothing in the knowledge base for ${asked}. The most asked:`,
      `${listed.join('\n')}${more}`,
      `A document that answers them lets the assistant answer them next time: POST /api/v1/documents (or /api/v1/documents/text). All of them: GET /api/v1/tenant/unanswered-questions/summary?${query}, one by one with their conversations: GET /api/v1/tenant/unanswered-questions?${query}.`,
      ['You get this email once a week, when the assistant could not answer something.', `Owners and admins get it. ${turnOffForYourself('knowledge_gaps', unsubscribeLink)}.`].join('\n'),
    ].join('\n\n'),
  };
}

export function knowledgeGapEmailsSaga(deps: KnowledgeGapEmailDependencies): Saga<'AssistantAnswered'> {
  const activeTenant = async (tenantId: string): Promise<TenantDocument | null> => {
    const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
    return tenant !== null && tenant.status === 'active' ? tenant : null;
  };

  /** Emails the week's questions, when there are any and anyone to tell, and closes the digest; again, nothing. */
  async function closeDigest({ tenant_id, week }: KnowledgeGapDigestDocument): Promise<void> {
    const context = { ...systemContext(deps.ids.newId(), KNOWLEDGE_GAP_EMAILS, null), tenant_id };
    const tenant = await activeTenant(tenant_id);
    let questions = 0;
    let recipients = 0;
    if (tenant !== null) {
      const { start, end } = weekBounds(week);
      const summary = await summarizeUnansweredQuestions(deps, tenant_id, { from: start, to: new Date(Date.parse(end) - 1).toISOString() }, LISTED);
      questions = summary.questions;
      const told = questions > 0 ? await ownersAndAdminsWanting(deps, tenant_id, 'knowledge_gaps') : [];
      await emailEach(
        deps,
        told,
        {
          tenantId: tenant_id,
          preference: 'knowledge_gaps',
          kind: 'knowledge_gaps',
          compose: (link) => knowledgeGapEmailOf(week, tenant.name, summary, link),
          idempotencyKey: (userId) => `knowledge-gaps:${tenant_id}:${userId}:${week}`,
        },
        context,
      );
      recipients = told.length;
    }
    await handleCommand(deps, knowledgeGapDigestAggregate, knowledgeGapDigestStream(tenant_id, week), { type: 'CloseKnowledgeGapDigest', data: { tenant_id, week, questions, recipients } }, context);
  }

  return {
    name: KNOWLEDGE_GAP_EMAILS,
    version: 1,
    filter: { kind: 'event_type', types: ['AssistantAnswered'] },
    async handle(answered) {
      const { tenant_id, answered_from_knowledge, answered_at } = answered.data;
      if (answered_from_knowledge || (await activeTenant(tenant_id)) === null) return;
      const week = weekOf(answered_at);
      const context = { ...systemContext(answered.metadata.correlation_id, KNOWLEDGE_GAP_EMAILS, answered.id), tenant_id };
      await handleCommand(deps, knowledgeGapDigestAggregate, knowledgeGapDigestStream(tenant_id, week), { type: 'OpenKnowledgeGapDigest', data: { tenant_id, week } }, context);
    },
    async runDue() {
      const before = new Date(deps.clock.now().getTime() - KNOWLEDGE_GAP_GRACE_MS).toISOString();
      const due = await deps.readStore
        .collection<KnowledgeGapDigestDocument>(KNOWLEDGE_GAP_DIGESTS)
        .find({ where: { due_at: { lte: before } }, sort: { field: 'due_at', direction: 'asc' }, limit: 100 });
      for (const digest of due.items) await closeDigest(digest);
    },
  };
}
