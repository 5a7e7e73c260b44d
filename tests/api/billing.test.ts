// Billing over HTTP (spec 4.9) and the super admin's payments (4.16): every route's success,
// 401, 403, 400 per bad field, 404 and 409; a plan bought through the provider's signed
// webhook raising the limits; a declined card leaving a failed payment and no upgrade; the
// webhook's signature, deduplication and unknown checkouts; 20 parallel deliveries and 20
// parallel confirms recording one payment; and the end of a period: canceled back to free,
// unpaid to past_due and then ended, renewed while past due.

import { expect } from 'chai';
import { checkQuota } from '../../application/entitlement/entitlements';
import { recordPaymentSucceeded } from '../../application/payment/payments';
import { createPlan, setPlanSellable } from '../../application/plan/plans';
import type { ProviderEvent } from '../../application/ports/payment-provider';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { userContext } from '../support/context';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner } from '../support/identity';
import { type SignedWebhook, TestPaymentProvider } from '../support/payment-provider';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { expectEveryEventAudited } from '../support/audit';

const ADMIN = { email: 'root@billing.test', password: 'root password 123' };
const DAY = 24 * 3600 * 1000;

describe('billing (/api/v1/billing, spec 4.9) and GET /api/v1/admin/payments', function () {
  this.timeout(60_000);
  let server: TestServer;
  let clock: ManualClock;
  let provider: TestPaymentProvider;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let adminToken: string;

  const as = (account: Account | string) => ({ authorization: `Bearer ${typeof account === 'string' ? account : account.token}` });
  const get = (path: string, who?: Account | string) => server.request('GET', path, { headers: who ? as(who) : {} });
  const post = (path: string, body: unknown, who?: Account | string, headers: Record<string, string> = {}) =>
    server.request('POST', path, { body, headers: { ...(who ? as(who) : {}), ...headers } });
  const deliver = (webhook: SignedWebhook, body = webhook.body) => server.request('POST', '/api/v1/billing/webhook', { rawBody: body, headers: webhook.headers });

  async function checkout(who: Account, body: Record<string, unknown> = { plan_code: 'starter', interval: 'month' }): Promise<TestResponse> {
    const response = await post('/api/v1/billing/checkout', body, who);
    if (response.status !== 201) throw new Error(`checkout: ${response.status} ${response.text}`);
    return response;
  }

  async function recorded(type: string, where: (event: DomainRecordedEvent) => boolean = () => true): Promise<DomainRecordedEvent[]> {
    const events = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: [type] }, maxCount: 100_000 });
    return events.filter(where);
  }
  const ofCheckout = (checkoutId: string) => (event: DomainRecordedEvent) => (event.data as { checkout_id?: string }).checkout_id === checkoutId;
  const paymentIdOf = (event: DomainRecordedEvent): string => (event.data as { payment_id: string }).payment_id;
  const ofTenant = (tenantId: string) => (event: DomainRecordedEvent) => (event.data as { tenant_id?: string }).tenant_id === tenantId;

  async function login(account: Account): Promise<Account> {
    const response = await gql(server, LOGIN, { email: account.email, password: PASSWORD, tenant_id: account.tenant_id });
    if (response.json.errors) throw new Error(JSON.stringify(response.json.errors));
    return { ...account, token: response.json.data.login.token };
  }

  async function adminLogin(): Promise<string> {
    return (await post('/api/v1/admin/auth/login', ADMIN)).json.token;
  }

  /** What the due pass finds once the read models show everything written so far. */
  async function duePass(): Promise<void> {
    expect(await server.platform.projections.waitFor(await server.platform.eventStore.headPosition(), { timeoutMs: 10_000 })).to.equal(true);
    await server.platform.sagas.runDue();
    expect(await server.platform.projections.waitFor(await server.platform.eventStore.headPosition(), { timeoutMs: 10_000 })).to.equal(true);
  }

  before(async () => {
    clock = new ManualClock(new Date());
    provider = new TestPaymentProvider(clock);
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password, BILLING_RETURN_URL: 'https://console.example/billing' },
      // No due passes but those the tests run.
      { clock, paymentProvider: provider, sagaRetryPollMs: 0 },
    );
    owner = await registerOwner(server, 'billing-org');
    admin = await joinAs(server, await registerOwner(server, 'billing-adm-home', 'billing-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'billing-mem-home', 'billing-mem@example.com'), owner.tenant_id, 'member');
    adminToken = await adminLogin();
  });
  after(() => server.close());

  describe('GET /plans', () => {
    it('lists the sellable plans, cheapest first, with limits and prices, to any member', async () => {
      const response = await get('/api/v1/billing/plans', member);
      expect(response.status).to.equal(200);
      expect(response.json.items.map((plan: { code: string }) => plan.code)).to.deep.equal(['free', 'starter', 'growth', 'premium']);
      const starter = response.json.items[1];
      expect(starter.limits).to.deep.equal({ messages_per_month: 5000, documents: 200, users: 10, business_tools: 10 });
      expect(starter.prices).to.deep.include({ interval: 'month', amount: 2900, currency: 'usd' });
      expect(Object.keys(starter).sort()).to.deep.equal(['code', 'description', 'features', 'id', 'limits', 'name', 'prices']);
    });

    it('is 401 without a token, with the super admin’s token or a widget-less garbage token', async () => {
      expect((await get('/api/v1/billing/plans')).status).to.equal(401);
      expect((await get('/api/v1/billing/plans', adminToken)).status).to.equal(401);
      expect((await get('/api/v1/billing/plans', 'v4.public.nonsense')).status).to.equal(401);
    });
  });

  describe('GET /subscription before any payment', () => {
    it('answers status none on the free plan, with its limits and the usage', async () => {
      const response = await get('/api/v1/billing/subscription', member);
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ status: 'none', subscribed_plan_id: null, interval: null, current_period_end: null, cancel_at_period_end: false });
      expect(response.json.plan).to.deep.equal({ id: 'free', code: 'free', name: 'Free' });
      expect(response.json.limits).to.deep.equal({ messages_per_month: 500, documents: 20, users: 3, business_tools: 2 });
      expect(response.json.usage.users).to.equal(3);
      expect(response.json.usage_resets_at).to.be.a('string');
    });

    it('is 401 without a token and with the super admin’s token', async () => {
      expect((await get('/api/v1/billing/subscription')).status).to.equal(401);
      expect((await get('/api/v1/billing/subscription', adminToken)).status).to.equal(401);
    });
  });

  describe('POST /checkout', () => {
    it('opens a checkout at the provider for the owner or an admin: 201 with where to pay', async () => {
      const response = await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' }, admin);
      expect(response.status).to.equal(201);
      expect(response.json).to.include({ plan_id: 'starter', plan_code: 'starter', interval: 'month', amount: 2900, currency: 'usd', provider: 'test', status: 'open', payment_id: null, failed_attempts: 0 });
      expect(response.json.url).to.match(/^https:\/\/payments\.test\/checkout\//);
      expect(Date.parse(response.json.expires_at)).to.be.greaterThan(clock.now().getTime());
      expect(await response.events()).to.deep.equal(['CheckoutStarted@checkout']);
      const request = provider.requests.at(-1)!;
      expect(request).to.include({ checkout_id: response.json.id, tenant_id: owner.tenant_id, amount: 2900, currency: 'usd', customer_email: admin.email });
      expect(request.webhook_url).to.equal(`${server.url}/api/v1/billing/webhook`);
      expect(request.success_url).to.equal(`https://console.example/billing?checkout_id=${response.json.id}&checkout=success`);
      expect(request.cancel_url).to.equal(`https://console.example/billing?checkout_id=${response.json.id}&checkout=canceled`);
      const [started] = await server.platform.eventStore.readStream(`checkout-${response.json.id}`);
      expect(started.metadata.actor).to.deep.equal({ kind: 'user', id: admin.user_id });
      expect(started.metadata.tenant_id).to.equal(owner.tenant_id);
    });

    it('accepts the plan by id, and honours Idempotency-Key: the same request again is the same checkout', async () => {
      const requests = provider.requests.length;
      const headers = { 'idempotency-key': 'buy-growth-1' };
      const first = await post('/api/v1/billing/checkout', { plan_id: 'growth', interval: 'year' }, owner, headers);
      expect(first.status).to.equal(201);
      expect(first.json).to.include({ plan_code: 'growth', interval: 'year', amount: 99000 });
      const again = await post('/api/v1/billing/checkout', { plan_id: 'growth', interval: 'year' }, owner, headers);
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect(provider.requests.length).to.equal(requests + 1);
      expect((await post('/api/v1/billing/checkout', { plan_id: 'growth', interval: 'month' }, owner, headers)).status).to.equal(422);
    });

    it('is 403 for a member, 401 without a token or with the super admin’s token', async () => {
      const denied = await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' }, member);
      expect(denied.status).to.equal(403);
      expect(denied.json.code).to.equal('insufficient_role');
      expect(await denied.events()).to.deep.equal(['AccessDenied@accessDenial']);
      expect((await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' })).status).to.equal(401);
      expect((await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' }, adminToken)).status).to.equal(401);
    });

    it('is 400 naming each bad field, recording nothing', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ plan_code: 'starter' }, 'interval'],
        [{ plan_code: 'starter', interval: 'week' }, 'interval'],
        [{ plan_id: 42, interval: 'month' }, 'plan_id'],
        [{ plan_code: '', interval: 'month' }, 'plan_code'],
        [{ interval: 'month' }, 'plan_id'],
        [{ plan_id: 'starter', plan_code: 'starter', interval: 'month' }, 'plan_code'],
      ];
      for (const [body, field] of cases) {
        const response = await post('/api/v1/billing/checkout', body, owner);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json).to.include({ code: 'invalid_request', field });
        expect(await response.events()).to.deep.equal([]);
      }
      const badKey = await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' }, owner, { 'idempotency-key': 'é' });
      expect(badKey.status).to.equal(400);
    });

    it('is 404 for an unknown plan, and 409 for a plan that cannot be bought', async () => {
      expect((await post('/api/v1/billing/checkout', { plan_id: 'nope', interval: 'month' }, owner)).json.code).to.equal('plan_not_found');
      expect((await post('/api/v1/billing/checkout', { plan_code: 'nope', interval: 'month' }, owner)).status).to.equal(404);
      const free = await post('/api/v1/billing/checkout', { plan_code: 'free', interval: 'month' }, owner);
      expect(free.status).to.equal(409);
      expect(free.json.code).to.equal('plan_is_default');
      const context = userContext();
      const monthly = await createPlan(
        server.platform.identity,
        {
          code: 'monthly-only',
          name: 'Monthly only',
          description: '',
          prices: [{ interval: 'month', amount: 500, currency: 'usd' }],
          limits: { messages_per_month: 10, documents: 1, users: 1, business_tools: 1 },
          features: { sdk_connections: false, whatsapp: false, handoff: false, crm: false },
        },
        context,
      );
      const yearly = await post('/api/v1/billing/checkout', { plan_code: 'monthly-only', interval: 'year' }, owner);
      expect(yearly.status).to.equal(409);
      expect(yearly.json.code).to.equal('interval_not_offered');
      await setPlanSellable(server.platform.identity, monthly.value.id, false, context);
      const retired = await post('/api/v1/billing/checkout', { plan_code: 'monthly-only', interval: 'month' }, owner);
      expect(retired.status).to.equal(409);
      expect(retired.json.code).to.equal('plan_not_sellable');
      expect(await retired.events()).to.deep.equal([]);
    });
  });

  describe('a plan bought through the provider’s signed webhook', () => {
    let checkoutId: string;
    let paid: SignedWebhook;

    it('activates the subscription and raises the limits', async () => {
      // On the free plan the organization's three seats are taken.
      expect(await checkQuota(server.platform.identity, owner.tenant_id, 'users')).to.include({ allowed: false, limit: 3, used: 3 });
      const refused = await post('/api/v1/team/invite', { email: 'fourth-seat@example.com', role: 'member' }, owner);
      expect(refused.status).to.equal(429);
      expect(refused.json).to.include({ code: 'quota_exceeded', quota: 'users', limit: 3, used: 3 });
      checkoutId = (await checkout(owner)).json.id;
      paid = provider.pay(checkoutId);
      const response = await deliver(paid);
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ received: true, outcome: 'applied', duplicate: false });
      const written = await response.events();
      expect(written[0]).to.equal('PaymentSucceeded@payment');
      expect(written.at(-1)).to.equal('ProviderEventReceived@providerEvent');
      // The request settles the payment, or the checkout_settlement saga got there first: either way once.
      expect((await server.platform.eventStore.readStream(`checkout-${checkoutId}`)).map((event) => event.type)).to.deep.equal(['CheckoutStarted', 'CheckoutCompleted']);
      expect((await recorded('SubscriptionStarted', ofTenant(owner.tenant_id))).length).to.equal(1);

      const subscription = await get('/api/v1/billing/subscription', member);
      expect(subscription.json).to.include({ status: 'active', subscribed_plan_id: 'starter', interval: 'month', cancel_at_period_end: false });
      expect(subscription.json.plan).to.deep.equal({ id: 'starter', code: 'starter', name: 'Starter' });
      expect(subscription.json.limits).to.deep.equal({ messages_per_month: 5000, documents: 200, users: 10, business_tools: 10 });
      const paidAt = new Date(paid.event.occurred_at);
      expect(subscription.json.current_period_start).to.equal(paidAt.toISOString());
      expect(Date.parse(subscription.json.current_period_end)).to.be.within(paidAt.getTime() + 28 * DAY, paidAt.getTime() + 31 * DAY);
      expect(await checkQuota(server.platform.identity, owner.tenant_id, 'users')).to.include({ allowed: true, limit: 10 });
      const invited = await post('/api/v1/team/invite', { email: 'fourth-seat@example.com', role: 'member' }, owner);
      expect(invited.status).to.equal(201);
    });

    it('records who did what: the provider’s events name it as their actor, and the audit log shows them', async () => {
      const [payment] = await recorded('PaymentSucceeded', ofCheckout(checkoutId));
      expect(payment.metadata.actor).to.deep.equal({ kind: 'system', id: 'payment_provider:test' });
      expect(payment.data).to.include({ tenant_id: owner.tenant_id, plan_id: 'starter', interval: 'month', amount: 2900, currency: 'usd', provider: 'test' });
      const audit = await get('/api/v1/org/audit-logs?action=SubscriptionStarted', owner);
      expect(audit.status).to.equal(200);
      expect(audit.json.items).to.have.length(1);
      expect(audit.json.items[0].action).to.equal('SubscriptionStarted');
    });

    it('applies the same event delivered again once: 200, nothing recorded', async () => {
      const again = await deliver(paid);
      expect(again.status).to.equal(200);
      expect(again.json).to.deep.equal({ received: true, outcome: 'applied', duplicate: true });
      expect(await again.events()).to.deep.equal([]);
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(1);
    });

    it('answers the paid checkout when it is confirmed, recording nothing', async () => {
      const confirmed = await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, owner);
      expect(confirmed.status).to.equal(200);
      expect(confirmed.json.checkout).to.include({ id: checkoutId, status: 'paid', payment_id: paymentIdOf((await recorded('PaymentSucceeded', ofCheckout(checkoutId)))[0]) });
      expect(confirmed.json.subscription).to.include({ status: 'active', subscribed_plan_id: 'starter' });
      expect(await confirmed.events()).to.deep.equal([]);
    });

    it('lists the payment in the history', async () => {
      const history = await get('/api/v1/billing/payments', admin);
      expect(history.status).to.equal(200);
      expect(history.json.items).to.have.length(1);
      expect(history.json.items[0]).to.include({ checkout_id: checkoutId, status: 'succeeded', amount: 2900, failure_code: null, tenant_id: owner.tenant_id });
      expect(history.json.next_cursor).to.equal(null);
    });
  });

  describe('a declined card', () => {
    let buyer: Account;
    let checkoutId: string;

    it('leaves a failed payment, the checkout open, and no upgrade', async () => {
      buyer = await registerOwner(server, 'declined-org');
      checkoutId = (await checkout(buyer, { plan_code: 'growth', interval: 'month' })).json.id;
      const response = await deliver(provider.decline(checkoutId));
      expect(response.status).to.equal(200);
      expect(response.json.outcome).to.equal('applied');
      expect(await response.events()).to.include('PaymentFailed@payment');
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(0);
      expect(await recorded('PaymentFailed', ofCheckout(checkoutId))).to.have.length(1);
      const subscription = await get('/api/v1/billing/subscription', buyer);
      expect(subscription.json).to.include({ status: 'none' });
      expect(subscription.json.plan.code).to.equal('free');
      const confirmed = await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, buyer);
      expect(confirmed.json.checkout).to.include({ status: 'open', failed_attempts: 1, payment_id: null });
      expect(confirmed.json.checkout.last_failure).to.deep.equal({ code: 'card_declined', message: 'Your card was declined.' });
      expect(await confirmed.events()).to.deep.equal([]);
    });

    it('still lets the payer pay afterwards; the history lists both, newest first, a page at a time', async () => {
      clock.advance(60_000);
      expect((await deliver(provider.pay(checkoutId))).json.outcome).to.equal('applied');
      expect((await get('/api/v1/billing/subscription', buyer)).json.plan.code).to.equal('growth');
      const first = await get('/api/v1/billing/payments?limit=1', buyer);
      expect(first.json.items.map((payment: { status: string }) => payment.status)).to.deep.equal(['succeeded']);
      expect(first.json.next_cursor).to.be.a('string');
      const second = await get(`/api/v1/billing/payments?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`, buyer);
      expect(second.json.items[0]).to.include({ status: 'failed', failure_code: 'card_declined', provider_payment_id: null });
      expect(second.json.next_cursor).to.equal(null);
    });

    it('shows every organization’s payments to the super admin, filtered by organization and status', async () => {
      const all = await get('/api/v1/admin/payments', adminToken);
      expect(all.status).to.equal(200);
      expect(all.json.items.length).to.be.at.least(3);
      const times = all.json.items.map((payment: { occurred_at: string }) => payment.occurred_at);
      expect(times).to.deep.equal([...times].sort().reverse());
      const theirs = await get(`/api/v1/admin/payments?tenant_id=${buyer.tenant_id}`, adminToken);
      expect(theirs.json.items.map((payment: { status: string }) => payment.status)).to.deep.equal(['succeeded', 'failed']);
      const failed = await get('/api/v1/admin/payments?status=failed', adminToken);
      expect(failed.json.items.map((payment: { checkout_id: string }) => payment.checkout_id)).to.deep.equal([checkoutId]);
      const paged = await get('/api/v1/admin/payments?limit=1', adminToken);
      expect(paged.json.items).to.have.length(1);
      expect(paged.json.next_cursor).to.be.a('string');
    });

    it('GET /admin/payments is 401 without a token or with a tenant token, 400 per bad filter', async () => {
      expect((await get('/api/v1/admin/payments')).status).to.equal(401);
      expect((await get('/api/v1/admin/payments', owner)).status).to.equal(401);
      const status = await get('/api/v1/admin/payments?status=refunded', adminToken);
      expect(status.status).to.equal(400);
      expect(status.json.field).to.equal('status');
      expect((await get('/api/v1/admin/payments?tenant_id=', adminToken)).json.field).to.equal('tenant_id');
      expect((await get('/api/v1/admin/payments?limit=0', adminToken)).json.code).to.equal('invalid_limit');
    });
  });

  describe('POST /webhook', () => {
    const countReceived = async (): Promise<number> => (await recorded('ProviderEventReceived')).length;

    it('is 400 invalid_signature for a tampered body, a wrong or missing signature, recording nothing', async () => {
      const checkoutId = (await checkout(owner)).json.id;
      const paid = provider.pay(checkoutId);
      const before = await countReceived();
      const tampered = await deliver(paid, paid.body.replace('"amount":2900', '"amount":1'));
      expect(tampered.status).to.equal(400);
      expect(tampered.json.code).to.equal('invalid_signature');
      expect(await tampered.events()).to.deep.equal([]);
      const unsigned = await server.request('POST', '/api/v1/billing/webhook', { rawBody: paid.body, headers: { 'content-type': 'application/json' } });
      expect(unsigned.status).to.equal(400);
      expect(unsigned.json.code).to.equal('invalid_signature');
      const forged = new TestPaymentProvider(clock).sign(paid.event);
      expect((await deliver(forged)).json.code).to.equal('invalid_signature');
      expect(await countReceived()).to.equal(before);
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(0);
    });

    it('is 400 invalid_signature for a signature older than the tolerance, recording nothing', async () => {
      const checkoutId = (await checkout(owner)).json.id;
      const { event } = provider.pay(checkoutId);
      const stale = provider.sign(event, new Date(clock.now().getTime() - 301_000));
      const response = await deliver(stale);
      expect(response.status).to.equal(400);
      expect(response.json.code).to.equal('invalid_signature');
      expect(await response.events()).to.deep.equal([]);
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(0);
    });

    it('records and ignores an event for a checkout the platform never opened, and one it does not act on', async () => {
      const unknown: ProviderEvent = {
        id: 'tev_unknown',
        kind: 'checkout_paid',
        checkout_id: 'no-such-checkout',
        provider_checkout_id: 'tpc_nobody',
        provider_payment_id: 'tpp_nobody',
        amount: 2900,
        currency: 'usd',
        occurred_at: clock.now().toISOString(),
      };
      const response = await deliver(provider.sign(unknown));
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ received: true, outcome: 'ignored_unknown_checkout', duplicate: false });
      expect(await response.events()).to.deep.equal(['ProviderEventReceived@providerEvent']);
      expect(await recorded('PaymentSucceeded', ofCheckout('no-such-checkout'))).to.have.length(0);
      const other = await deliver(provider.sign({ id: 'tev_other', kind: 'other', type: 'customer.created', occurred_at: clock.now().toISOString() }));
      expect(other.json).to.deep.equal({ received: true, outcome: 'ignored', duplicate: false });
      expect((await deliver(provider.sign({ id: 'tev_other', kind: 'other', type: 'customer.created', occurred_at: clock.now().toISOString() }))).json.duplicate).to.equal(true);
    });

    it('is 415 for a body that is not JSON', async () => {
      const response = await server.request('POST', '/api/v1/billing/webhook', { rawBody: 'a=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(response.status).to.equal(415);
    });
  });

  describe('concurrency', () => {
    it('20 parallel deliveries of one webhook event record exactly one payment', async () => {
      const buyer = await registerOwner(server, 'parallel-hooks');
      const checkoutId = (await checkout(buyer)).json.id;
      const paid = provider.pay(checkoutId);
      const responses = await Promise.all(Array.from({ length: 20 }, () => deliver(paid)));
      expect(responses.map((response) => response.status)).to.deep.equal(Array(20).fill(200));
      expect(responses.every((response) => response.json.outcome === 'applied')).to.equal(true);
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(1);
      expect(await recorded('CheckoutCompleted', ofCheckout(checkoutId))).to.have.length(1);
      expect(await recorded('ProviderEventReceived', (event) => (event.data as { event_id: string }).event_id === paid.event.id)).to.have.length(1);
      expect(await recorded('SubscriptionStarted', ofTenant(buyer.tenant_id))).to.have.length(1);
    });

    it('20 parallel confirms of one checkout (and its webhook delivered 20 times meanwhile) record exactly one payment, and answer alike', async () => {
      const buyer = await registerOwner(server, 'parallel-confirms');
      const checkoutId = (await checkout(buyer)).json.id;
      const paid = provider.pay(checkoutId);
      const [confirms] = await Promise.all([
        Promise.all(Array.from({ length: 20 }, () => post('/api/v1/billing/confirm', { checkout_id: checkoutId }, buyer))),
        Promise.all(Array.from({ length: 20 }, () => deliver(paid))),
      ]);
      expect(confirms.map((response) => response.status)).to.deep.equal(Array(20).fill(200));
      const payments = await recorded('PaymentSucceeded', ofCheckout(checkoutId));
      expect(payments).to.have.length(1);
      for (const response of confirms) expect(response.json.checkout).to.include({ status: 'paid', payment_id: paymentIdOf(payments[0]) });
      expect(await recorded('SubscriptionStarted', ofTenant(buyer.tenant_id))).to.have.length(1);
      expect(await recorded('SubscriptionRenewed', ofTenant(buyer.tenant_id))).to.have.length(0);
    });
  });

  describe('the provider out of reach', () => {
    it('is 502 payment_provider_error for checkout and confirm, recording nothing', async () => {
      const open = (await checkout(owner)).json.id;
      provider.down = true;
      try {
        const refused = await post('/api/v1/billing/checkout', { plan_code: 'starter', interval: 'month' }, owner);
        expect(refused.status).to.equal(502);
        expect(refused.json.code).to.equal('payment_provider_error');
        expect(await refused.events()).to.deep.equal([]);
        const unconfirmed = await post('/api/v1/billing/confirm', { checkout_id: open }, owner);
        expect(unconfirmed.status).to.equal(502);
        expect(await unconfirmed.events()).to.deep.equal([]);
      } finally {
        provider.down = false;
      }
    });
  });

  describe('crash safety', () => {
    it('a payment recorded by a request that stopped before settling it is settled by the checkout_settlement saga', async () => {
      const buyer = await registerOwner(server, 'stopped-settlement');
      const opened = (await checkout(buyer)).json;
      const paid = provider.pay(opened.id);
      // What the webhook's first step records; the process stops there.
      const recordedPayment = await recordPaymentSucceeded(
        server.platform.commands,
        { tenant_id: buyer.tenant_id, checkout_id: opened.id, plan_id: 'starter', interval: 'month', amount: 2900, currency: 'usd', provider: 'test', provider_payment_id: 'tpp_stopped', paid_at: clock.now().toISOString() },
        userContext({ tenant_id: buyer.tenant_id }),
      );
      expect(recordedPayment.events).to.have.length(1);
      await eventually(async () => (await recorded('SubscriptionStarted', ofTenant(buyer.tenant_id))).length === 1, 10_000, 'the saga to activate the subscription');
      expect((await server.platform.eventStore.readStream(`checkout-${opened.id}`)).map((event) => event.type)).to.deep.equal(['CheckoutStarted', 'CheckoutCompleted']);
      const [started] = await recorded('SubscriptionStarted', ofTenant(buyer.tenant_id));
      expect(started.metadata.actor).to.deep.equal({ kind: 'system', id: 'checkout_settlement' });
      // The provider delivers its webhook again: recorded as received, nothing applied twice.
      const redelivered = await deliver(paid);
      expect(redelivered.json).to.deep.equal({ received: true, outcome: 'applied', duplicate: false });
      expect(await recorded('PaymentSucceeded', ofCheckout(opened.id))).to.have.length(1);
      expect(await recorded('SubscriptionStarted', ofTenant(buyer.tenant_id))).to.have.length(1);
      expect((await get('/api/v1/billing/subscription', buyer)).json.status).to.equal('active');
    });
  });

  describe('POST /confirm', () => {
    let buyer: Account;
    let checkoutId: string;

    it('records the payment the provider reports and activates the plan; under the same Idempotency-Key, the same answer', async () => {
      buyer = await registerOwner(server, 'confirming-org');
      checkoutId = (await checkout(buyer, { plan_code: 'premium', interval: 'month' })).json.id;
      const open = await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, buyer);
      expect(open.status).to.equal(200);
      expect(open.json.checkout.status).to.equal('open');
      expect(open.json.subscription.status).to.equal('none');
      expect(await open.events()).to.deep.equal([]);
      provider.pay(checkoutId);
      const headers = { 'idempotency-key': 'confirm-premium' };
      const first = await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, buyer, headers);
      expect(first.status).to.equal(200);
      expect(first.json.checkout.status).to.equal('paid');
      expect(first.json.subscription).to.include({ status: 'active', subscribed_plan_id: 'premium' });
      expect(first.json.subscription.features.sdk_connections).to.equal(true);
      expect(await first.events()).to.include('PaymentSucceeded@payment');
      const [payment] = await recorded('PaymentSucceeded', ofCheckout(checkoutId));
      expect(payment.metadata.actor).to.deep.equal({ kind: 'user', id: buyer.user_id });
      const again = await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, buyer, headers);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect(await recorded('PaymentSucceeded', ofCheckout(checkoutId))).to.have.length(1);
    });

    it('is 404 for an unknown checkout or another organization’s', async () => {
      const unknown = await post('/api/v1/billing/confirm', { checkout_id: 'nope' }, owner);
      expect(unknown.status).to.equal(404);
      expect(unknown.json.code).to.equal('checkout_not_found');
      expect((await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, owner)).status).to.equal(404);
    });

    it('is 400 per bad field, 403 for a member, 401 without a token or with the super admin’s', async () => {
      expect((await post('/api/v1/billing/confirm', {}, owner)).json).to.include({ code: 'invalid_request', field: 'checkout_id' });
      expect((await post('/api/v1/billing/confirm', { checkout_id: 7 }, owner)).json.field).to.equal('checkout_id');
      expect((await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, member)).status).to.equal(403);
      expect((await post('/api/v1/billing/confirm', { checkout_id: checkoutId })).status).to.equal(401);
      expect((await post('/api/v1/billing/confirm', { checkout_id: checkoutId }, adminToken)).status).to.equal(401);
    });
  });

  describe('POST /cancel and POST /subscription, and the end of a period', () => {
    let unpaid: Account;
    let renewing: Account;
    let expiring: string;

    it('are 403 for a member, 401 without a token or with the super admin’s, 400 for a bad at_period_end, 409 with nothing to cancel', async () => {
      for (const path of ['/api/v1/billing/cancel', '/api/v1/billing/subscription']) {
        expect((await post(path, {}, member)).status).to.equal(403);
        expect((await post(path, {})).status).to.equal(401);
        expect((await post(path, {}, adminToken)).status).to.equal(401);
        const bad = await post(path, { at_period_end: 'yes' }, owner);
        expect(bad.status).to.equal(400);
        expect(bad.json.field).to.equal('at_period_end');
      }
      const nothing = await registerOwner(server, 'nothing-to-cancel');
      const refused = await post('/api/v1/billing/cancel', {}, nothing);
      expect(refused.status).to.equal(409);
      expect(refused.json.code).to.equal('no_subscription');
    });

    it('cancel at period end keeps the plan until then; asked again (either route), nothing changes', async () => {
      const response = await server.request('POST', '/api/v1/billing/cancel', { headers: as(owner) });
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ status: 'canceling', cancel_at_period_end: true });
      expect(response.json.plan.code).to.equal('starter');
      expect(await response.events()).to.deep.equal(['SubscriptionCancellationScheduled@subscription']);
      const again = await post('/api/v1/billing/subscription', { at_period_end: true }, admin);
      expect(again.status).to.equal(200);
      expect(again.json.status).to.equal('canceling');
      expect(await again.events()).to.deep.equal([]);
    });

    it('cancel at once returns to the free plan now', async () => {
      const buyer = await registerOwner(server, 'cancel-at-once');
      const checkoutId = (await checkout(buyer)).json.id;
      await deliver(provider.pay(checkoutId));
      const response = await post('/api/v1/billing/subscription', { at_period_end: false }, buyer);
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ status: 'canceled', cancel_at_period_end: false });
      expect(response.json.plan.code).to.equal('free');
      expect(response.json.limits.users).to.equal(3);
      expect(await response.events()).to.deep.equal(['SubscriptionCanceled@subscription']);
    });

    it('at the end of the period: canceled back to free, an unpaid one past due with its plan', async () => {
      unpaid = await registerOwner(server, 'unpaid-org');
      await deliver(provider.pay((await checkout(unpaid)).json.id));
      renewing = await registerOwner(server, 'renewing-org');
      await deliver(provider.pay((await checkout(renewing)).json.id));
      expiring = (await checkout(owner, { plan_code: 'premium', interval: 'month' })).json.id;
      await duePass();
      expect((await get('/api/v1/billing/subscription', owner)).json.status).to.equal('canceling');

      clock.advance(32 * DAY);
      // Tokens last at most 30 days.
      [owner, unpaid, renewing] = await Promise.all([login(owner), login(unpaid), login(renewing)]);
      await duePass();
      const canceled = await get('/api/v1/billing/subscription', owner);
      expect(canceled.json).to.include({ status: 'canceled', cancel_at_period_end: false, subscribed_plan_id: 'starter' });
      expect(canceled.json.plan.code).to.equal('free');
      expect(canceled.json.limits.users).to.equal(3);
      const pastDue = await get('/api/v1/billing/subscription', unpaid);
      expect(pastDue.json.status).to.equal('past_due');
      expect(pastDue.json.plan.code).to.equal('starter');
      expect(Date.parse(pastDue.json.grace_until) - Date.parse(pastDue.json.current_period_end)).to.equal(7 * DAY);
      // A second pass records nothing more.
      const before = (await recorded('SubscriptionPastDue')).length;
      await duePass();
      expect((await recorded('SubscriptionPastDue')).length).to.equal(before);
      expect(await recorded('SubscriptionCanceled', ofTenant(owner.tenant_id))).to.have.length(1);
    });

    it('a checkout the provider let expire is confirmed as expired', async () => {
      const confirmed = await post('/api/v1/billing/confirm', { checkout_id: expiring }, owner);
      expect(confirmed.status).to.equal(200);
      expect(confirmed.json.checkout.status).to.equal('expired');
      expect(await confirmed.events()).to.deep.equal(['CheckoutExpired@checkout']);
    });

    it('a new checkout while past due renews the plan from the payment', async () => {
      await deliver(provider.pay((await checkout(renewing)).json.id));
      const renewed = await get('/api/v1/billing/subscription', renewing);
      expect(renewed.json.status).to.equal('active');
      expect(renewed.json.current_period_start).to.equal(clock.now().toISOString());
      expect(await recorded('SubscriptionRenewed', ofTenant(renewing.tenant_id))).to.have.length(1);
    });

    it('after the grace period an unpaid subscription ends (unpaid) and the organization is on free', async () => {
      clock.advance(8 * DAY);
      await duePass();
      const ended = await get('/api/v1/billing/subscription', unpaid);
      expect(ended.json.status).to.equal('ended');
      expect(ended.json.plan.code).to.equal('free');
      expect(ended.json.ended_at).to.be.a('string');
      const [end] = await recorded('SubscriptionEnded', ofTenant(unpaid.tenant_id));
      expect(end.data).to.include({ reason: 'unpaid' });
      expect(end.metadata.actor).to.deep.equal({ kind: 'system', id: 'subscription_periods' });
      expect((await get('/api/v1/billing/subscription', renewing)).json.status).to.equal('active');
    });
  });

  describe('GET /payments', () => {
    it('is 403 for a member, 401 without a token or with the super admin’s, 400 for a bad page', async () => {
      member = await login(member);
      adminToken = await adminLogin();
      expect((await get('/api/v1/billing/payments', member)).status).to.equal(403);
      expect((await get('/api/v1/billing/payments')).status).to.equal(401);
      expect((await get('/api/v1/billing/payments', adminToken)).status).to.equal(401);
      expect((await get('/api/v1/billing/payments?limit=0', owner)).json).to.include({ code: 'invalid_limit', field: 'limit' });
      expect((await get('/api/v1/billing/payments?cursor=', owner)).json.code).to.equal('invalid_cursor');
    });
  });
  describe('the audit log, after everything above', () => {
    it('puts every event it recorded in an audit log with its actor, these new kinds among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['CheckoutStarted', 'CheckoutCompleted', 'CheckoutAttemptFailed', 'CheckoutExpired', 'PaymentSucceeded', 'PaymentFailed', 'ProviderEventReceived', 'SubscriptionStarted', 'SubscriptionRenewed', 'SubscriptionCancellationScheduled', 'SubscriptionCanceled', 'SubscriptionPastDue', 'SubscriptionEnded']);
    });
  });
});
