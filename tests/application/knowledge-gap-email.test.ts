// The text of the weekly knowledge-gap email (application/conversation/knowledge-gap-emails.ts):
// its week, its count (with a + when the week held more than were read), the groups, and the
// hint that there are more when the list is full.

import { expect } from 'chai';
import { knowledgeGapEmailOf } from '../../application/conversation/knowledge-gap-emails';
import { weekOf } from '../../domain/knowledge-gap-digest/knowledge-gap-digest';

describe('knowledge-gap email', () => {
  const week = weekOf('2026-11-25T10:00:00.000Z');
  const group = (question: string, count: number) => ({ question, count, first_asked_at: '2026-11-23T09:00:00.000Z', last_asked_at: '2026-11-25T09:00:00.000Z' });

  it('says the week and lists the groups, without the API link when there is none', () => {
    const { subject, text } = knowledgeGapEmailOf(week, 'Acme', { items: [group('Gift cards?', 4), group('Bitcoin?', 1)], questions: 5, truncated: false }, null);
    expect(subject).to.equal('[Acme] 5 questions your assistant could not answer from the knowledge base (2026-11-23 to 2026-11-29)');
    expect(text.split('\n\n').slice(0, 2)).to.deep.equal([
      'From 2026-11-23 to 2026-11-29 (UTC), the assistant of Acme found nothing in the knowledge base for 5 questions. The most asked:',
      '- "Gift cards?" (asked 4 times)\n- "Bitcoin?"',
    ]);
    expect(text).to.contain('Turn them off for yourself: PATCH /api/v1/me/notifications {"knowledge_gaps": false}.');
  });

  it('says when there are more than it lists, and more than were read', () => {
    const items = Array.from({ length: 10 }, (_, index) => group(`Question ${index}?`, 10 - index));
    const { subject, text } = knowledgeGapEmailOf(week, 'Acme', { items, questions: 5000, truncated: true }, null);
    expect(subject).to.contain('5000+ questions');
    expect(text).to.contain('- "Question 9?"\nAnd others: the whole list is below.');
  });
});
