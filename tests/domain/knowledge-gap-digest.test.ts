// The weekly knowledge-gap digest (decider), given/when/then, and its weeks: Monday 00:00 to
// Sunday 24:00 UTC.

import { expect } from 'chai';
import {
  type KnowledgeGapDigestCommand,
  type KnowledgeGapDigestEvent,
  knowledgeGapDigestDecider,
  knowledgeGapDigestStream,
  weekBounds,
  weekOf,
} from '../../domain/knowledge-gap-digest/knowledge-gap-digest';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('knowledge-gap digest (decider)', () => {
  const spec = deciderSpec(knowledgeGapDigestDecider);
  const week = weekOf(FIXED_NOW.toISOString());
  const open: KnowledgeGapDigestCommand = { type: 'OpenKnowledgeGapDigest', data: { tenant_id: 't1', week } };
  const opened: KnowledgeGapDigestEvent = { type: 'KnowledgeGapDigestOpened', data: { tenant_id: 't1', week, opened_at: FIXED_NOW.toISOString() } };
  const close = (questions: number, recipients: number): KnowledgeGapDigestCommand => ({ type: 'CloseKnowledgeGapDigest', data: { tenant_id: 't1', week, questions, recipients } });
  const closed = (questions: number, recipients: number): KnowledgeGapDigestEvent => ({
    type: 'KnowledgeGapDigestClosed',
    data: { tenant_id: 't1', week, questions, recipients, closed_at: FIXED_NOW.toISOString() },
  });

  it('is opened once, by the week’s first unanswered question', () => {
    spec.given([]).when(open).then([opened]);
    spec.given([opened]).when(open).thenNothingHappened();
  });

  it('closes once, and only once opened; nothing opens it again', () => {
    spec.given([opened]).when(close(12, 2)).then([closed(12, 2)]);
    spec.given([opened, closed(12, 2)]).when(close(13, 2)).thenNothingHappened();
    spec.given([]).when(close(0, 0)).thenNothingHappened();
    spec.given([opened, closed(0, 0)]).when(open).thenNothingHappened();
  });

  it('counts weeks from Monday 00:00 UTC', () => {
    // 2026-11-23 is a Monday.
    expect(weekOf('2026-11-23T00:00:00.000Z')).to.equal(weekOf('2026-11-29T23:59:59.999Z'));
    expect(weekOf('2026-11-30T00:00:00.000Z')).to.equal(weekOf('2026-11-29T23:59:59.999Z') + 1);
    expect(weekOf('2026-11-22T23:59:59.999Z')).to.equal(weekOf('2026-11-23T00:00:00.000Z') - 1);
    expect(weekBounds(weekOf('2026-11-25T12:00:00.000Z'))).to.deep.equal({ start: '2026-11-23T00:00:00.000Z', end: '2026-11-30T00:00:00.000Z' });
    expect(knowledgeGapDigestStream('t1', week)).to.equal(`knowledgeGapDigest-t1:${week}`);
  });
});
