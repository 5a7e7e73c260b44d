import { expect } from 'chai';
import { domainEvents } from '../../domain/events';
import { type OrchestrationPayloadsCommand, orchestrationPayloadsDecider } from '../../domain/orchestration-payloads/orchestration-payloads';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe("orchestration payloads of an organization's day (decider)", () => {
  const spec = () => deciderSpec(orchestrationPayloadsDecider, FIXED_NOW);
  const erase = (day: string, reason: 'retention' | 'request' = 'retention'): OrchestrationPayloadsCommand => ({ type: 'EraseOrchestrationPayloads', data: { tenant_id: 't1', day, reason } });
  const erased = { type: 'OrchestrationPayloadsErased' as const, data: { tenant_id: 't1', day: '2026-11-20', reason: 'retention' as const, erased_at: FIXED_NOW.toISOString() } };

  it('erases a day once, for good: again records nothing, whoever asks', () => {
    spec().given([]).when(erase('2026-11-20')).then([erased]);
    spec().given([erased]).when(erase('2026-11-20', 'request')).thenNothingHappened();
  });

  it('refuses what is not a calendar day (400 naming day)', () => {
    for (const day of ['2026-11-31', '2026-1-5', '20261120', 'yesterday']) spec().given([]).when(erase(day)).thenThrows('invalid', 'invalid_request');
  });

  it("erases the key of the organization's day, which seals its events' payloads", () => {
    expect(domainEvents.erasedSubjectOf('OrchestrationPayloadsErased', erased.data)).to.equal('orchestration:t1:2026-11-20');
    expect(domainEvents.erasingTypes).to.include('OrchestrationPayloadsErased');
  });
});
