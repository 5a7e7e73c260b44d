// The daily usage and tenant revenue read models count each event once, on its own day (UTC),
// however often it is replayed; the usage series answer every day of a range.

import { expect } from 'chai';
import { messagesSeries, revenueSeries } from '../../application/analytics/usage-series';
import { DAILY_USAGE, type DailyUsageDocument, dailyUsageProjection } from '../../projections/daily-usage';
import { ProjectionRunner } from '../../projections/runner';
import { TENANT_REVENUE, type TenantRevenueDocument, tenantRevenueProjection } from '../../projections/tenant-revenue';
import { newEvent } from '../support/events';
import { type EmbeddedStores, embeddedStores } from '../support/stores';

describe('daily usage and tenant revenue projections', () => {
  let stores: EmbeddedStores;
  let runner: ProjectionRunner;

  const tenantCreated = (tenantId: string, at: string) => newEvent('TenantCreated', { tenant_id: tenantId, name: tenantId, slug: tenantId, branding: {}, settings: {}, created_at: at });
  const joined = (tenantId: string, userId: string, at: string) => newEvent('MemberJoined', { tenant_id: tenantId, user_id: userId, role: 'member', joined_at: at });
  const facts = (paymentId: string, tenantId: string, amount: number, currency: string) => ({
    payment_id: paymentId,
    tenant_id: tenantId,
    checkout_id: `checkout-${paymentId}`,
    plan_id: 'starter',
    interval: 'month',
    amount,
    currency,
    provider: 'sandbox',
  });
  const paid = (paymentId: string, tenantId: string, amount: number, currency: string, at: string) =>
    newEvent('PaymentSucceeded', { ...facts(paymentId, tenantId, amount, currency), provider_payment_id: `pi-${paymentId}`, paid_at: at });
  const failed = (paymentId: string, tenantId: string, at: string) =>
    newEvent('PaymentFailed', { ...facts(paymentId, tenantId, 900, 'usd'), failure_code: 'card_declined', failure_message: 'declined', failed_at: at });

  const startRunner = async (): Promise<void> => {
    runner = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, [dailyUsageProjection, tenantRevenueProjection], {
      retryDelayMs: 20,
      idleCheckpointMs: 0,
    });
    await runner.start();
  };
  const settle = async () => {
    expect(await runner.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
  };
  const days = async () => {
    const page = await stores.readStore.collection<DailyUsageDocument>(DAILY_USAGE).find({ limit: 1000 });
    return Object.fromEntries(page.items.map((doc) => [doc.id, doc.metric === 'revenue' ? { count: doc.count, amount: doc.amount } : doc.count]));
  };
  const revenueOf = (tenantId: string) => stores.readStore.collection<TenantRevenueDocument>(TENANT_REVENUE).get(tenantId);

  /** Stops the runner, moves both projections' checkpoints back to `position`, and starts again: what a crash between a write and its checkpoint would replay. */
  const replayFrom = async (position: number) => {
    await runner.stop();
    for (const name of [dailyUsageProjection.name, tenantRevenueProjection.name]) {
      const state = await stores.readStore.getProjectionState(name);
      await stores.readStore.putProjectionState({ ...state!, checkpoint: position });
    }
    await startRunner();
    await settle();
  };

  const history = async () => {
    await stores.eventStore.appendToStream('tenant-t1', [tenantCreated('t1', '2026-03-01T09:00:00.000Z')]);
    // 23:30 two hours west of UTC is 01:30 the next day in UTC.
    await stores.eventStore.appendToStream('tenant-t2', [tenantCreated('t2', '2026-03-01T23:30:00.000-02:00')]);
    await stores.eventStore.appendToStream('membership-t1', [joined('t1', 'u1', '2026-03-01T09:00:01.000Z'), joined('t1', 'u2', '2026-03-02T10:00:00.000Z')]);
    await stores.eventStore.appendToStream('payment-p1', [paid('p1', 't1', 4900, 'usd', '2026-03-02T12:00:00.000Z')]);
    await stores.eventStore.appendToStream('payment-p2', [paid('p2', 't1', 4900, 'usd', '2026-03-02T13:00:00.000Z')]);
    await stores.eventStore.appendToStream('payment-p3', [paid('p3', 't2', 3900, 'EUR', '2026-03-02T14:00:00.000Z')]);
    await stores.eventStore.appendToStream('payment-p4', [failed('p4', 't2', '2026-03-03T08:00:00.000Z')]);
  };

  const EXPECTED = {
    'tenants_created:2026-03-01': 1,
    'tenants_created:2026-03-02': 1,
    'members_joined:2026-03-01': 1,
    'members_joined:2026-03-02': 1,
    'payments_succeeded:2026-03-02': 3,
    'revenue:2026-03-02:usd': { count: 2, amount: 9800 },
    'revenue:2026-03-02:eur': { count: 1, amount: 3900 },
    'payments_failed:2026-03-03': 1,
  };

  beforeEach(async () => {
    stores = embeddedStores();
    await startRunner();
  });
  afterEach(async () => {
    await runner.stop();
    await stores.dispose();
  });

  it('counts each event on the day (UTC) it states, and revenue per currency in minor units', async () => {
    await history();
    await settle();
    // The events were recorded today; they count on the days they name.
    expect(await days()).to.deep.equal(EXPECTED);
    expect(await revenueOf('t1')).to.deep.include({ payments_succeeded: 2, payments_failed: 0, revenue: { usd: 9800 }, last_paid_at: '2026-03-02T13:00:00.000Z' });
    expect(await revenueOf('t2')).to.deep.include({ payments_succeeded: 1, payments_failed: 1, revenue: { eur: 3900 } });
  });

  it('changes nothing when the whole log is replayed onto its documents', async () => {
    await history();
    await settle();
    await replayFrom(0);
    expect(await days()).to.deep.equal(EXPECTED);
    expect(await revenueOf('t1')).to.deep.include({ payments_succeeded: 2, revenue: { usd: 9800 } });
  });

  it('changes nothing when a replay starts between two events that touched the same day', async () => {
    await history();
    await settle();
    // p1 and p2 both added to `payments_succeeded:2026-03-02` and `revenue:2026-03-02:usd`: replay from p1, so p2 comes again.
    const p1 = (await stores.events.readStream('payment-p1'))[0].position;
    await replayFrom(p1);
    expect(await days()).to.deep.equal(EXPECTED);
    expect(await revenueOf('t1')).to.deep.include({ payments_succeeded: 2, revenue: { usd: 9800 } });
    // And what comes after a replay still counts.
    await stores.eventStore.appendToStream('payment-p5', [paid('p5', 't1', 100, 'usd', '2026-03-02T20:00:00.000Z')]);
    await settle();
    expect((await days())['revenue:2026-03-02:usd']).to.deep.equal({ count: 3, amount: 9900 });
    expect(await revenueOf('t1')).to.deep.include({ payments_succeeded: 3, revenue: { usd: 9900 } });
  });

  it('answers every day of a range, zero where nothing happened, ends included', async () => {
    await history();
    await settle();
    const revenue = await revenueSeries(stores, { from: '2026-02-28', to: '2026-03-03' });
    expect(revenue.currencies).to.deep.equal(['eur', 'usd']);
    expect(revenue.buckets).to.deep.equal([
      { date: '2026-02-28', payments_succeeded: 0, payments_failed: 0, revenue: { eur: 0, usd: 0 } },
      { date: '2026-03-01', payments_succeeded: 0, payments_failed: 0, revenue: { eur: 0, usd: 0 } },
      { date: '2026-03-02', payments_succeeded: 3, payments_failed: 0, revenue: { eur: 3900, usd: 9800 } },
      { date: '2026-03-03', payments_succeeded: 0, payments_failed: 1, revenue: { eur: 0, usd: 0 } },
    ]);
    expect(revenue.totals).to.deep.equal({ payments_succeeded: 3, payments_failed: 1, revenue: { eur: 3900, usd: 9800 } });
    // A range that misses the payment day has no currencies.
    const before = await revenueSeries(stores, { from: '2026-03-03', to: '2026-03-03' });
    expect(before).to.deep.equal({ from: '2026-03-03', to: '2026-03-03', currencies: [], totals: { payments_succeeded: 0, payments_failed: 1, revenue: {} }, buckets: [{ date: '2026-03-03', payments_succeeded: 0, payments_failed: 1, revenue: {} }] });

    const messages = await messagesSeries(stores, { from: '2026-02-27', to: '2026-03-28' });
    expect(messages.buckets).to.have.length(30);
    expect(messages.buckets[0]).to.deep.equal({ date: '2026-02-27', count: 0 });
    expect(messages.buckets[2]).to.deep.equal({ date: '2026-03-01', count: 0 });
    expect(messages.buckets[29]).to.deep.equal({ date: '2026-03-28', count: 0 });
    expect(messages.total).to.equal(0);
  });
});
