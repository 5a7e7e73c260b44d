// The weekly knowledge-gap digest of one organization: the week's first question the assistant
// answered without the knowledge base opens it; once the week is over it is closed, and the
// organization's owners and admins are emailed the week's unanswered questions, counted as
// asked alike. Weeks run Monday 00:00 to Sunday 24:00 UTC. Stream
// `knowledgeGapDigest-<tenant id>:<week>`, `week` the whole weeks since Monday 1969-12-29:
// two events at most, whatever the number of questions.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

export const KnowledgeGapDigestOpened = declareEvent('KnowledgeGapDigestOpened', t.type({ tenant_id: t.string, week: t.number, opened_at: t.string }));
/** The week is over: `questions` were read for it, and `recipients` people emailed (none for a week whose questions are all gone). */
export const KnowledgeGapDigestClosed = declareEvent(
  'KnowledgeGapDigestClosed',
  t.type({ tenant_id: t.string, week: t.number, questions: t.number, recipients: t.number, closed_at: t.string }),
);

export const knowledgeGapDigestEvents = eventGroup('knowledgeGapDigest', [KnowledgeGapDigestOpened, KnowledgeGapDigestClosed]);
export type KnowledgeGapDigestEvent = GroupEvent<typeof knowledgeGapDigestEvents>;

export type KnowledgeGapDigestCommand =
  | { type: 'OpenKnowledgeGapDigest'; data: { tenant_id: string; week: number } }
  | { type: 'CloseKnowledgeGapDigest'; data: { tenant_id: string; week: number; questions: number; recipients: number } };

export type KnowledgeGapDigestState = { status: 'none' | 'open' | 'closed' };

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** Monday 1969-12-29 00:00 UTC, the start of week 0. */
const FIRST_MONDAY_MS = -3 * DAY_MS;

/** The week (since Monday 1969-12-29, UTC) an instant falls in. */
export const weekOf = (iso: string): number => Math.floor((Date.parse(iso) - FIRST_MONDAY_MS) / WEEK_MS);
/** When a week starts (Monday 00:00 UTC), and when the next does. */
export const weekBounds = (week: number): { start: string; end: string } => ({
  start: new Date(FIRST_MONDAY_MS + week * WEEK_MS).toISOString(),
  end: new Date(FIRST_MONDAY_MS + (week + 1) * WEEK_MS).toISOString(),
});

export const knowledgeGapDigestStream = (tenantId: string, week: number): string => toStreamName(knowledgeGapDigestEvents.category, `${tenantId}:${week}`);

export const knowledgeGapDigestDecider: Decider<KnowledgeGapDigestCommand, KnowledgeGapDigestEvent, KnowledgeGapDigestState> = {
  initialState: () => ({ status: 'none' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'KnowledgeGapDigestOpened':
        return { status: 'open' };
      case 'KnowledgeGapDigestClosed':
        return { status: 'closed' };
    }
  },
  decide(command, state, { now }): Either<DomainError, KnowledgeGapDigestEvent[]> {
    switch (command.type) {
      case 'OpenKnowledgeGapDigest':
        if (state.status !== 'none') return right([]);
        return right([{ type: 'KnowledgeGapDigestOpened', data: { ...command.data, opened_at: now.toISOString() } }]);
      case 'CloseKnowledgeGapDigest':
        if (state.status !== 'open') return right([]);
        return right([{ type: 'KnowledgeGapDigestClosed', data: { ...command.data, closed_at: now.toISOString() } }]);
    }
  },
};
