// Saga `checkout_settlement` (version 1): settles every recorded payment (`settleCheckout`):
// a success completes its checkout and activates the tenant's subscription, a failure notes
// the failed attempt. The request that records a payment settles it too, at once; this saga is
// what makes that crash-safe: a process that stopped after recording the payment is finished
// here. Settling is idempotent per payment, so the request and the saga racing, or the event
// redelivered, record each step once.

import { type CommandDependencies } from '../command-handling/handle-command';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { settleCheckout } from './checkouts';

export const CHECKOUT_SETTLEMENT = 'checkout_settlement';

export function checkoutSettlementSaga(deps: CommandDependencies): Saga<'PaymentSucceeded' | 'PaymentFailed'> {
  return {
    name: CHECKOUT_SETTLEMENT,
    version: 1,
    filter: { kind: 'event_type', types: ['PaymentSucceeded', 'PaymentFailed'] },
    async handle(event) {
      const context = { ...systemContext(event.metadata.correlation_id, CHECKOUT_SETTLEMENT, event.id), tenant_id: event.data.tenant_id };
      await settleCheckout(deps, event.data.payment_id, context);
    },
  };
}
