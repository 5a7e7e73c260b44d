// Puts an organization on a plan, as a paid checkout does (the subscription aggregate's own
// activation), for suites that need a plan's features.

import { activateSubscription } from '../../application/subscription/subscriptions';
import type { TestServer } from './server';
import { userContext } from './context';

/** Subscribes the tenant to a catalogue plan (`starter`, `growth`, `premium`) for a month from now. */
export async function subscribeTo(server: TestServer, tenantId: string, planCode: 'starter' | 'growth' | 'premium'): Promise<void> {
  const paymentId = `pay-${planCode}-${tenantId}`;
  const activated = await activateSubscription(
    server.platform.commands,
    { tenant_id: tenantId, plan_id: planCode, plan_code: planCode, interval: 'month', payment_id: paymentId, checkout_id: `checkout-${paymentId}`, paid_at: server.platform.clock.now().toISOString() },
    userContext({ tenant_id: tenantId, actor: { kind: 'system', id: 'payment_provider' } }),
  );
  await server.platform.readYourWrites(activated.position);
}
