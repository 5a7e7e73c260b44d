// The alert digest of an organization's hour (decider), given/when/then: the hour's first end
// opens it and every later one finds it open; it closes once, and nothing opens it again.

import { expect } from 'chai';
import {
  type OrchestrationAlertDigestCommand,
  type OrchestrationAlertDigestEvent,
  hourOf,
  orchestrationAlertDigestDecider,
  orchestrationAlertDigestStream,
} from '../../domain/orchestration-alert-digest/alert-digest';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('orchestration alert digest (decider)', () => {
  const spec = deciderSpec(orchestrationAlertDigestDecider);
  const hour = hourOf(FIXED_NOW.toISOString());
  const open = (first: string): OrchestrationAlertDigestCommand => ({ type: 'OpenAlertDigest', data: { tenant_id: 't1', hour, first_event_id: first } });
  const opened = (first: string): OrchestrationAlertDigestEvent => ({ type: 'OrchestrationAlertDigestOpened', data: { tenant_id: 't1', hour, first_event_id: first, opened_at: FIXED_NOW.toISOString() } });
  const close = (standing: number, recipients: number): OrchestrationAlertDigestCommand => ({ type: 'CloseAlertDigest', data: { tenant_id: 't1', hour, standing, recipients } });
  const closed = (standing: number, recipients: number): OrchestrationAlertDigestEvent => ({
    type: 'OrchestrationAlertDigestClosed',
    data: { tenant_id: 't1', hour, standing, recipients, closed_at: FIXED_NOW.toISOString() },
  });

  it('is opened by the first end of the hour, which it names; a later end, or the same again, changes nothing', () => {
    spec.given([]).when(open('e1')).then([opened('e1')]);
    spec.given([opened('e1')]).when(open('e2')).thenNothingHappened();
    spec.given([opened('e1')]).when(open('e1')).thenNothingHappened();
  });

  it('closes once, with what it told and to how many', () => {
    spec.given([opened('e1')]).when(close(11, 2)).then([closed(11, 2)]);
    spec.given([opened('e1'), closed(11, 2)]).when(close(12, 2)).thenNothingHappened();
  });

  it('is not closed before it is opened, nor opened again once closed', () => {
    spec.given([]).when(close(0, 0)).thenNothingHappened();
    spec.given([opened('e1'), closed(0, 0)]).when(open('e3')).thenNothingHappened();
  });

  it('is one stream per organization and UTC hour', () => {
    expect(hourOf('2026-12-02T14:59:59.999Z')).to.equal(hourOf('2026-12-02T14:00:00.000Z'));
    expect(hourOf('2026-12-02T15:00:00.000Z')).to.equal(hourOf('2026-12-02T14:00:00.000Z') + 1);
    expect(orchestrationAlertDigestStream('t1', hour)).to.equal(`orchestrationAlertDigest-t1:${hour}`);
  });
});
