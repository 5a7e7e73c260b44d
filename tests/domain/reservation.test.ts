import { reservationDecider } from '../../domain/reservation/reservation';
import { deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(reservationDecider);
const claimed = { type: 'ReservationClaimed' as const, data: { scope: 'tenant_slug', owner_id: 't1' } };

describe('reservation decider', () => {
  it('claims a free reservation for its owner', () => {
    spec.given([]).when({ type: 'ClaimReservation', data: { scope: 'tenant_slug', owner_id: 't1' } }).then([claimed]);
  });

  it('refuses another owner and accepts the same owner again without events', () => {
    spec.given([claimed]).when({ type: 'ClaimReservation', data: { scope: 'tenant_slug', owner_id: 't2' } }).thenThrows('conflict', 'tenant_slug_taken');
    spec.given([claimed]).when({ type: 'ClaimReservation', data: { scope: 'tenant_slug', owner_id: 't1' } }).thenNothingHappened();
  });

  it('releases for the owner only, after which another may claim', () => {
    const released = { type: 'ReservationReleased' as const, data: { scope: 'tenant_slug', owner_id: 't1' } };
    spec.given([claimed]).when({ type: 'ReleaseReservation', data: { owner_id: 't2' } }).thenNothingHappened();
    spec.given([claimed]).when({ type: 'ReleaseReservation', data: { owner_id: 't1' } }).then([released]);
    spec
      .given([claimed, released])
      .when({ type: 'ClaimReservation', data: { scope: 'tenant_slug', owner_id: 't2' } })
      .then([{ type: 'ReservationClaimed', data: { scope: 'tenant_slug', owner_id: 't2' } }]);
  });
});
