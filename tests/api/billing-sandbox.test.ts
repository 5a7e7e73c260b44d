// A plan bought through the embedded sandbox provider, as a person would: the checkout's
// hosted page opened and its form submitted with the documented test cards; the outcome
// reaches the platform only through the sandbox's signed webhook. A declined card leaves a
// failed payment and no upgrade; the good card activates the plan and raises the limits;
// cancelling, then the end of the period, returns the organization to the free plan.

import { expect } from 'chai';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const DAY = 24 * 3600 * 1000;

describe('billing through the sandbox payment provider (hosted page, signed webhook)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let clock: ManualClock;
  let owner: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const subscriptionOf = async (account: Account) => (await server.request('GET', '/api/v1/billing/subscription', { headers: as(account) })).json;
  const recorded = async (type: string, checkoutId: string): Promise<DomainRecordedEvent[]> =>
    (await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: [type] }, maxCount: 100_000 })).filter(
      (event) => (event.data as { checkout_id?: string }).checkout_id === checkoutId,
    );

  /** Submits the hosted page's card form, as a browser does, without following the redirect. */
  const submitCard = (pageUrl: string, cardNumber: string): Promise<Response> =>
    fetch(pageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ card_number: cardNumber, expiry: '12/40', cvc: '123' }).toString(),
      redirect: 'manual',
    });

  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), BILLING_RETURN_URL: 'https://console.example/billing' }, { clock, sagaRetryPollMs: 0 });
    owner = await registerOwner(server, 'sandbox-buyer');
    await joinAs(server, await registerOwner(server, 'sandbox-adm-home', 'sandbox-adm@example.com'), owner.tenant_id, 'admin');
    await joinAs(server, await registerOwner(server, 'sandbox-mem-home', 'sandbox-mem@example.com'), owner.tenant_id, 'member');
  });
  after(() => server.close());

  it('a declined test card leaves a failed payment and no upgrade; the good card activates the plan and raises the limits', async () => {
    const refusedInvite = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'seat-four@example.com', role: 'member' } });
    expect(refusedInvite.status).to.equal(429);

    const checkout = await server.request('POST', '/api/v1/billing/checkout', { headers: as(owner), body: { plan_code: 'starter', interval: 'month' } });
    expect(checkout.status).to.equal(201);
    expect(checkout.json.provider).to.equal('sandbox');
    expect(checkout.json.url).to.equal(`${server.url}/billing/sandbox/checkout/${new URL(checkout.json.url).pathname.split('/').pop()}`);
    const page = await fetch(checkout.json.url);
    expect(page.status).to.equal(200);
    expect(await page.text()).to.include('Starter');

    const declined = await submitCard(checkout.json.url, '4000 0000 0000 0002');
    expect(declined.status).to.equal(402);
    const [failure] = await recorded('PaymentFailed', checkout.json.id);
    expect(failure.data).to.include({ failure_code: 'card_declined', provider: 'sandbox' });
    expect(failure.metadata.actor).to.deep.equal({ kind: 'system', id: 'payment_provider:sandbox' });
    expect(await recorded('PaymentSucceeded', checkout.json.id)).to.have.length(0);
    const stillFree = await subscriptionOf(owner);
    expect(stillFree.status).to.equal('none');
    expect(stillFree.plan.code).to.equal('free');

    const paid = await submitCard(checkout.json.url, '4242 4242 4242 4242');
    expect(paid.status).to.equal(303);
    expect(paid.headers.get('location')).to.equal(`https://console.example/billing?checkout_id=${checkout.json.id}&checkout=success`);
    expect(await recorded('PaymentSucceeded', checkout.json.id)).to.have.length(1);
    const active = await subscriptionOf(owner);
    expect(active).to.include({ status: 'active', subscribed_plan_id: 'starter' });
    expect(active.limits.users).to.equal(10);
    const invited = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'seat-four@example.com', role: 'member' } });
    expect(invited.status).to.equal(201);

    const history = (await server.request('GET', '/api/v1/billing/payments', { headers: as(owner) })).json.items;
    expect(history.map((payment: { status: string }) => payment.status).sort()).to.deep.equal(['failed', 'succeeded']);
    const confirmed = await server.request('POST', '/api/v1/billing/confirm', { headers: as(owner), body: { checkout_id: checkout.json.id } });
    expect(confirmed.json.checkout).to.include({ status: 'paid', failed_attempts: 1 });
    expect(await confirmed.events()).to.deep.equal([]);
  });

  it('cancelling, then the end of the period, returns the organization to the free plan', async () => {
    const canceling = await server.request('POST', '/api/v1/billing/cancel', { headers: as(owner), body: {} });
    expect(canceling.json).to.include({ status: 'canceling', cancel_at_period_end: true });
    expect(canceling.json.plan.code).to.equal('starter');

    clock.advance(32 * DAY);
    const login = await gql(server, LOGIN, { email: owner.email, password: PASSWORD, tenant_id: owner.tenant_id });
    owner = { ...owner, token: login.json.data.login.token };
    expect(await server.platform.projections.waitFor(await server.platform.eventStore.headPosition(), { timeoutMs: 10_000 })).to.equal(true);
    await server.platform.sagas.runDue();
    expect(await server.platform.projections.waitFor(await server.platform.eventStore.headPosition(), { timeoutMs: 10_000 })).to.equal(true);

    const free = await subscriptionOf(owner);
    expect(free).to.include({ status: 'canceled', subscribed_plan_id: 'starter' });
    expect(free.plan.code).to.equal('free');
    expect(free.limits.users).to.equal(3);
  });
});
