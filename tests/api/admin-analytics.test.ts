// The super admin's analytics and usage routes (spec 4.16) over real tenants, members and
// payments: the overview, tenants with their figures, and the daily series with their range.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { type PaymentCommand, type PaymentFactsData, paymentStream } from '../../domain/payment/payment';
import { activateSubscription } from '../../application/subscription/subscriptions';
import { paymentAggregate } from '../../application/payment/payments';
import { userContext } from '../support/context';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const ADMIN = { email: 'root@analytics.test', password: 'root password 123' };

describe('super admin analytics and usage (/api/v1/admin/analytics, /usage)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let alpha: Account;
  let beta: Account;
  let gamma: Account;
  let token: string;
  const as = (bearer: string | Account) => ({ authorization: `Bearer ${typeof bearer === 'string' ? bearer : bearer.token}` });
  const get = (path: string, bearer: string | Account = token) => server.request('GET', path, { headers: as(bearer) });

  /** Records a payment as the provider's report would: through the payment aggregate. */
  async function recordPayment(outcome: 'succeeded' | 'failed', paymentId: string, tenantId: string, amount: number, currency: string, at: string): Promise<void> {
    const facts: PaymentFactsData = { payment_id: paymentId, tenant_id: tenantId, checkout_id: `checkout-${paymentId}`, plan_id: 'starter', interval: 'month', amount, currency, provider: 'sandbox' };
    const command: PaymentCommand =
      outcome === 'succeeded'
        ? { type: 'RecordPaymentSucceeded', data: { ...facts, provider_payment_id: `pi_${paymentId}`, paid_at: at } }
        : { type: 'RecordPaymentFailed', data: { ...facts, failure_code: 'card_declined', failure_message: 'the card was declined', failed_at: at } };
    const context = userContext({ tenant_id: tenantId, actor: { kind: 'system', id: 'payment_provider' } });
    const { position } = await handleCommand(server.platform.commands, paymentAggregate, paymentStream(paymentId), command, context);
    await server.platform.readYourWrites(position);
  }

  before(async () => {
    clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password }, { clock });
    token = (await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token;
    alpha = await registerOwner(server, 'analytics-alpha');
    clock.advance(60_000);
    beta = await registerOwner(server, 'analytics-beta');
    clock.advance(60_000);
    gamma = await registerOwner(server, 'analytics-gamma');
    await joinAs(server, beta, alpha.tenant_id, 'member');
    expect((await server.request('POST', `/api/v1/admin/tenants/${beta.tenant_id}/suspend`, { headers: as(token), body: { reason: 'unpaid invoices' } })).status).to.equal(200);
    expect((await server.request('DELETE', `/api/v1/admin/tenants/${gamma.tenant_id}`, { headers: as(token) })).status).to.be.oneOf([200, 204]);

    await recordPayment('succeeded', 'pay-october', alpha.tenant_id, 4900, 'usd', '2026-10-15T08:00:00.000Z');
    await recordPayment('succeeded', 'pay-alpha', alpha.tenant_id, 4900, 'usd', '2026-11-20T12:00:00.000Z');
    await recordPayment('failed', 'pay-beta-declined', beta.tenant_id, 3900, 'eur', '2026-11-21T07:00:00.000Z');
    await recordPayment('succeeded', 'pay-beta', beta.tenant_id, 3900, 'eur', '2026-11-22T09:00:00.000Z');
    // Alpha's payment bought the starter plan.
    const activated = await activateSubscription(
      server.platform.commands,
      { tenant_id: alpha.tenant_id, plan_id: 'starter', plan_code: 'starter', interval: 'month', payment_id: 'pay-alpha', checkout_id: 'checkout-pay-alpha', paid_at: '2026-11-20T12:00:00.000Z' },
      userContext({ tenant_id: alpha.tenant_id, actor: { kind: 'system', id: 'payment_provider' } }),
    );
    await server.platform.readYourWrites(activated.position);
  });
  after(() => server.close());

  describe('GET /analytics/overview', () => {
    it("counts tenants by status, members, active subscriptions by plan, and this month's payments and revenue", async () => {
      const response = await get('/api/v1/admin/analytics/overview');
      expect(response.status).to.equal(200);
      const overview = response.json;
      expect(overview.month).to.equal('2026-11');
      expect(overview.generated_at).to.equal(clock.now().toISOString());
      // A soft-deleted tenant stays, and its member with it: the data stays for audit.
      expect(overview.tenants).to.deep.equal({ total: 3, by_status: { active: 1, suspended: 1, deleted: 1 }, created_this_month: 3 });
      expect(overview.members).to.deep.equal({ total: 4, joined_this_month: 4 });
      expect(overview.subscriptions.active).to.equal(1);
      expect(overview.subscriptions.by_plan.map((plan: { plan_code: string; active: number }) => [plan.plan_code, plan.active])).to.deep.equal([
        ['free', 0],
        ['starter', 1],
        ['growth', 0],
        ['premium', 0],
      ]);
      // October's payment is revenue to date, not this month's.
      expect(overview.payments_this_month).to.deep.equal({ succeeded: 2, failed: 1, revenue: { usd: 4900, eur: 3900 } });
      expect(overview.messages_this_month).to.equal(0);
      expect(overview.documents_this_month).to.equal(0);
      expect(await response.events()).to.deep.equal([]);
    });
  });

  describe('GET /analytics/tenants', () => {
    it('lists tenants newest first with their plan, members, usage, payments and revenue to date', async () => {
      const response = await get('/api/v1/admin/analytics/tenants');
      expect(response.status).to.equal(200);
      expect(response.json.next_cursor).to.equal(null);
      const [deleted, ...others] = response.json.items;
      expect(deleted).to.deep.include({ id: gamma.tenant_id, status: 'deleted', created_at: '2026-11-22T10:02:00.000Z', members: 1, revenue: {} });
      expect(others).to.deep.equal([
        {
          id: beta.tenant_id,
          name: 'Org analytics-beta',
          slug: 'analytics-beta',
          status: 'suspended',
          created_at: '2026-11-22T10:01:00.000Z',
          plan: { id: 'free', code: 'free', name: 'Free' },
          members: 1,
          documents: 0,
          messages_this_month: 0,
          payments_succeeded: 1,
          payments_failed: 1,
          revenue: { eur: 3900 },
        },
        {
          id: alpha.tenant_id,
          name: 'Org analytics-alpha',
          slug: 'analytics-alpha',
          status: 'active',
          created_at: '2026-11-22T10:00:00.000Z',
          plan: { id: 'starter', code: 'starter', name: 'Starter' },
          members: 2,
          documents: 0,
          messages_this_month: 0,
          payments_succeeded: 2,
          payments_failed: 0,
          revenue: { usd: 9800 },
        },
      ]);
    });

    it('sorts oldest first or by name, filters by status, and pages with a cursor', async () => {
      const ids = (response: { json: { items: Array<{ id: string }> } }) => response.json.items.map((item) => item.id);
      expect(ids(await get('/api/v1/admin/analytics/tenants?sort=oldest'))).to.deep.equal([alpha.tenant_id, beta.tenant_id, gamma.tenant_id]);
      expect(ids(await get('/api/v1/admin/analytics/tenants?sort=name'))).to.deep.equal([alpha.tenant_id, beta.tenant_id, gamma.tenant_id]);
      expect(ids(await get('/api/v1/admin/analytics/tenants?status=suspended'))).to.deep.equal([beta.tenant_id]);
      expect(ids(await get('/api/v1/admin/analytics/tenants?status=active'))).to.deep.equal([alpha.tenant_id]);
      expect(ids(await get('/api/v1/admin/analytics/tenants?status=deleted'))).to.deep.equal([gamma.tenant_id]);
      const first = await get('/api/v1/admin/analytics/tenants?limit=2');
      expect(ids(first)).to.deep.equal([gamma.tenant_id, beta.tenant_id]);
      expect(first.json.next_cursor).to.be.a('string');
      const second = await get(`/api/v1/admin/analytics/tenants?limit=2&cursor=${first.json.next_cursor}`);
      expect(ids(second)).to.deep.equal([alpha.tenant_id]);
      expect(second.json.next_cursor).to.equal(null);
    });

    it('answers 400 naming a bad status, sort, limit or cursor', async () => {
      for (const [query, field] of [
        ['status=gone', 'status'],
        ['sort=revenue', 'sort'],
        ['sort=name&sort=oldest', 'sort'],
        ['limit=0', 'limit'],
      ]) {
        const response = await get(`/api/v1/admin/analytics/tenants?${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.json.field, query).to.equal(field);
      }
      const foreign = await get('/api/v1/admin/analytics/tenants?cursor=bm90LWEtY3Vyc29y');
      expect(foreign.status).to.equal(400);
      expect(foreign.json.code).to.equal('invalid_cursor');
    });
  });

  describe('GET /usage/revenue, /usage/messages, /usage/documents', () => {
    it('answers payments and revenue per day, every day of the range present', async () => {
      const response = await get('/api/v1/admin/usage/revenue?from=2026-10-15&to=2026-11-22');
      expect(response.status).to.equal(200);
      const series = response.json;
      expect(series).to.deep.include({ from: '2026-10-15', to: '2026-11-22', currencies: ['eur', 'usd'] });
      expect(series.totals).to.deep.equal({ payments_succeeded: 3, payments_failed: 1, revenue: { eur: 3900, usd: 9800 } });
      expect(series.buckets).to.have.length(39);
      const byDate = new Map(series.buckets.map((bucket: { date: string }) => [bucket.date, bucket]));
      expect(byDate.get('2026-10-15')).to.deep.equal({ date: '2026-10-15', payments_succeeded: 1, payments_failed: 0, revenue: { eur: 0, usd: 4900 } });
      expect(byDate.get('2026-10-16')).to.deep.equal({ date: '2026-10-16', payments_succeeded: 0, payments_failed: 0, revenue: { eur: 0, usd: 0 } });
      expect(byDate.get('2026-11-20')).to.deep.equal({ date: '2026-11-20', payments_succeeded: 1, payments_failed: 0, revenue: { eur: 0, usd: 4900 } });
      expect(byDate.get('2026-11-21')).to.deep.equal({ date: '2026-11-21', payments_succeeded: 0, payments_failed: 1, revenue: { eur: 0, usd: 0 } });
      expect(byDate.get('2026-11-22')).to.deep.equal({ date: '2026-11-22', payments_succeeded: 1, payments_failed: 0, revenue: { eur: 3900, usd: 0 } });
    });

    it('defaults to the last 30 days up to today (UTC)', async () => {
      const revenue = (await get('/api/v1/admin/usage/revenue')).json;
      expect(revenue).to.deep.include({ from: '2026-10-24', to: '2026-11-22' });
      expect(revenue.buckets).to.have.length(30);
      expect(revenue.totals).to.deep.equal({ payments_succeeded: 2, payments_failed: 1, revenue: { eur: 3900, usd: 4900 } });
      for (const path of ['/api/v1/admin/usage/messages', '/api/v1/admin/usage/documents']) {
        const response = await get(path);
        expect(response.status, path).to.equal(200);
        expect(response.json).to.deep.include({ from: '2026-10-24', to: '2026-11-22', total: 0 });
        expect(response.json.buckets, path).to.have.length(30);
        expect(response.json.buckets[0]).to.deep.equal({ date: '2026-10-24', count: 0 });
        expect(response.json.buckets[29]).to.deep.equal({ date: '2026-11-22', count: 0 });
      }
    });

    it('answers 400 invalid_request naming the field for a bad day, `from` after `to`, or a range over 366 days', async () => {
      const cases: Array<[string, string]> = [
        ['from=yesterday', 'from'],
        ['from=2026-11-1', 'from'],
        ['from=2026-11-01&from=2026-11-02', 'from'],
        ['to=2026-02-30', 'to'],
        ['to=', 'to'],
        ['from=2026-11-23&to=2026-11-22', 'from'],
        ['from=2025-11-21&to=2026-11-22', 'from'],
      ];
      for (const path of ['/api/v1/admin/usage/messages', '/api/v1/admin/usage/documents', '/api/v1/admin/usage/revenue']) {
        for (const [query, field] of cases) {
          const response = await get(`${path}?${query}`);
          expect(response.status, `${path}?${query}`).to.equal(400);
          expect(response.json, `${path}?${query}`).to.include({ code: 'invalid_request', field });
        }
      }
      // 366 days is the most answered at once.
      const year = await get('/api/v1/admin/usage/messages?from=2025-11-22&to=2026-11-22');
      expect(year.status).to.equal(200);
      expect(year.json.buckets).to.have.length(366);
    });
  });

  describe('authentication', () => {
    const ROUTES = ['/api/v1/admin/analytics/overview', '/api/v1/admin/analytics/tenants', '/api/v1/admin/usage/messages', '/api/v1/admin/usage/documents', '/api/v1/admin/usage/revenue'];

    it('answers 401 without a token, with a tenant token, or with a token that is not one, before reading the query', async () => {
      for (const path of ROUTES) {
        const none = await server.request('GET', `${path}?from=bad`);
        expect(none.status, path).to.equal(401);
        expect((await get(`${path}?from=bad`, alpha)).status, `${path} with a tenant token`).to.equal(401);
        expect((await get(path, 'v4.public.nonsense')).status, `${path} with a forged token`).to.equal(401);
      }
    });

    it('refuses the admin token on tenant routes', async () => {
      expect((await get('/api/v1/org/members', token)).status).to.equal(401);
    });
  });
});
