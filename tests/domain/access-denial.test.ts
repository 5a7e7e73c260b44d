import { accessDenialDecider } from '../../domain/access-denial/access-denial';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(accessDenialDecider);
const denial = { tenant_id: 't1', user_id: 'u1', method: 'GET', path: '/api/v1/org/audit-logs', code: 'insufficient_role' };
const window = { tenant_id: 't1', user_id: 'u1', window_start: '2026-11-22T10:00:00.000Z', window_end: '2026-11-22T10:01:00.000Z' };

describe('access denial decider', () => {
  it('records a denial with its time', () => {
    spec.given([]).when({ type: 'RecordAccessDenial', data: denial }).then([{ type: 'AccessDenied', data: { ...denial, denied_at: FIXED_NOW.toISOString() } }]);
  });

  it('records the count of the denials past the bound of a window, and nothing when there were none', () => {
    spec.given([]).when({ type: 'RecordSuppressedAccessDenials', data: { ...window, count: 10 } }).then([{ type: 'AccessDenialsSuppressed', data: { ...window, count: 10 } }]);
    spec.given([]).when({ type: 'RecordSuppressedAccessDenials', data: { ...window, count: 0 } }).thenNothingHappened();
  });
});
