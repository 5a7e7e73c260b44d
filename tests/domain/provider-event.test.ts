// The provider event decider: an event is recorded as received once; delivered again, nothing.

import { type ProviderEventEvent, type ProviderEventReceipt, providerEventDecider } from '../../domain/provider-event/provider-event';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(providerEventDecider);
const receipt: ProviderEventReceipt = { provider: 'stripe', event_id: 'evt_1', kind: 'checkout_paid', checkout_id: 'co-1', outcome: 'applied' };
const received: ProviderEventEvent = { type: 'ProviderEventReceived', data: { ...receipt, received_at: FIXED_NOW.toISOString() } };

describe('provider event decider', () => {
  it('records an event the first time it is received, with what was done', () => {
    spec.given([]).when({ type: 'RecordProviderEvent', data: receipt }).then([received]);
    const unknown: ProviderEventReceipt = { ...receipt, checkout_id: 'nobody', outcome: 'ignored_unknown_checkout' };
    spec.given([]).when({ type: 'RecordProviderEvent', data: unknown }).then([{ type: 'ProviderEventReceived', data: { ...unknown, received_at: FIXED_NOW.toISOString() } }]);
  });

  it('records nothing when the same event is received again', () => {
    spec.given([received]).when({ type: 'RecordProviderEvent', data: receipt }).thenNothingHappened();
    spec.given([received]).when({ type: 'RecordProviderEvent', data: { ...receipt, outcome: 'ignored' } }).thenNothingHappened();
  });
});
