// The sandbox payment provider's hosted checkout page over HTTP, on the real platform: the page
// renders what it is told, escaped; each test card does what docs/billing.md says; the outcome
// leaves only as a signed webhook POSTed to the checkout's webhook URL (a local receiver here,
// standing where POST /api/v1/billing/webhook will be), which the provider's parseWebhook
// verifies.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createHmac, randomUUID } from 'node:crypto';
import { silentLogger } from '../../application/ports/logger';
import type { CheckoutRequest, PaymentProvider, ProviderEvent } from '../../application/ports/payment-provider';
import { sandboxCheckoutPageRouter } from '../../adapters/http/billing/sandbox-page';
import { createHttpServer } from '../../adapters/http/http-server';
import { createHttpApp } from '../../adapters/http/server';
import { SANDBOX_SIGNATURE_HEADER, SandboxPaymentProvider, signSandboxWebhook } from '../../infrastructure/payments/sandbox';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock, embeddedStores } from '../support/stores';
import { type WebhookReceiver, deadAddress, startWebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'a sandbox webhook secret for the page tests';
const PAY = { card_number: '4242 4242 4242 4242', expiry: '12/40', cvc: '123' };
const HOSTILE = `<script>alert("x")</script> & 'Co'`;

interface PageAnswer {
  status: number;
  headers: Headers;
  text: string;
}

async function post(url: string, fields: Record<string, string>): Promise<PageAnswer> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function get(url: string): Promise<PageAnswer> {
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

describe('the sandbox checkout page (/billing/sandbox/checkout/{id})', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let provider: PaymentProvider;

  before(async () => {
    receiver = await startWebhookReceiver();
    server = await startTestServer({ BILLING_SANDBOX_WEBHOOK_SECRET: SECRET }, { sandboxWebhookDelivery: { backoffMs: () => 1 } });
    provider = server.platform.paymentProvider;
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });
  beforeEach(() => {
    receiver.deliveries.length = 0;
  });

  const request = (overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
    checkout_id: randomUUID(),
    tenant_id: randomUUID(),
    plan: { id: randomUUID(), code: 'growth', name: 'Growth' },
    interval: 'month',
    amount: 4900,
    currency: 'usd',
    customer_email: 'owner@example.com',
    success_url: `${receiver.url}/billing/done`,
    cancel_url: `${receiver.url}/billing?from="checkout"&x=<y>`,
    webhook_url: `${receiver.url}/api/v1/billing/webhook`,
    platform_url: server.url,
    ...overrides,
  });
  const open = async (overrides: Partial<CheckoutRequest> = {}) => provider.createCheckout(request(overrides));
  const events = (): ProviderEvent[] => receiver.deliveries.map((delivery) => provider.parseWebhook(delivery.body, delivery.headers));

  it('is the sandbox: the platform pays through it when Stripe is not configured, and links its page on the request base', async () => {
    expect(provider.name).to.equal('sandbox');
    const checkout = await open();
    expect(checkout.url).to.equal(`${server.url}/billing/sandbox/checkout/${checkout.provider_checkout_id}`);
  });

  it('shows the plan, the amount and interval and a card form, escaping everything it renders, with no outside resource', async () => {
    const checkout = await open({ plan: { id: randomUUID(), code: 'growth', name: HOSTILE }, customer_email: '"<b>"@example.com' });
    const page = await get(checkout.url);
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(page.text).to.include('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;');
    expect(page.text).to.include('&quot;&lt;b&gt;&quot;@example.com');
    expect(page.text).to.not.match(/<script|<b>/i);
    expect(page.text).to.include('<p class="amount" id="amount">$49.00 <span id="interval">per month</span></p>');
    for (const name of ['card_number', 'expiry', 'cvc']) expect(page.text).to.include(`name="${name}"`);
    expect(page.text).to.include('<form method="post" novalidate>');
    expect(page.text).to.include(`<a id="cancel" href="${receiver.url}/billing?from=&quot;checkout&quot;&amp;x=&lt;y&gt;">Cancel and return</a>`);
    for (const card of ['4242 4242 4242 4242', '4000 0000 0000 0002', '4000 0000 0000 9995']) expect(page.text).to.include(card);
    expect(page.headers.get('content-security-policy')).to.match(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; base-uri 'none'; frame-ancestors 'none'$/);
    expect(page.headers.get('x-frame-options')).to.equal('DENY');
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(receiver.deliveries).to.deep.equal([]);
  });

  it("shows a yearly price, and amounts in the currency's own decimals", async () => {
    const euros = await get((await open({ interval: 'year', amount: 19000, currency: 'eur' })).url);
    expect(euros.text).to.include('€190.00 <span id="interval">per year</span>');
    const yen = await get((await open({ amount: 4900, currency: 'jpy' })).url);
    expect(yen.text).to.include('¥4,900');
  });

  it('pays with 4242 4242 4242 4242: 303 to the success URL, one signed checkout_paid webhook, then the page says paid', async () => {
    const asked = request({ success_url: `${receiver.url}/billing/done?session={CHECKOUT_SESSION_ID}` });
    const checkout = await provider.createCheckout(asked);
    const paid = await post(checkout.url, PAY);
    expect(paid.status).to.equal(303);
    expect(paid.headers.get('location')).to.equal(`${receiver.url}/billing/done?session=${checkout.provider_checkout_id}`);
    expect(receiver.deliveries).to.have.length(1);
    const [delivery] = receiver.deliveries;
    expect(delivery.path).to.equal('/api/v1/billing/webhook');
    const [t] = delivery.headers[SANDBOX_SIGNATURE_HEADER].split(',');
    const expected = createHmac('sha256', SECRET).update(`${t.slice(2)}.`).update(delivery.body).digest('hex');
    expect(delivery.headers[SANDBOX_SIGNATURE_HEADER]).to.equal(`${t},v1=${expected}`);
    const [event] = events();
    expect(event).to.deep.include({ kind: 'checkout_paid', checkout_id: asked.checkout_id, provider_checkout_id: checkout.provider_checkout_id, amount: 4900, currency: 'usd' });
    expect(await provider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.include({ status: 'paid' });
    const after = await get(checkout.url);
    expect(after.status).to.equal(200);
    expect(after.text).to.include('This checkout has been paid. It cannot be paid again.');
    expect(after.text).to.not.include('name="card_number"');
    const again = await post(checkout.url, PAY);
    expect(again.status).to.equal(409);
    expect(again.text).to.include('It cannot be paid again.');
    expect(receiver.deliveries).to.have.length(1);
  });

  it('declines 4000 0000 0000 0002 and 4000 0000 0000 9995: 402 with the refusal on the page and a checkout_failed webhook each; another card still pays', async () => {
    const checkout = await open();
    const declined = await post(checkout.url, { ...PAY, card_number: '4000 0000 0000 0002' });
    expect(declined.status).to.equal(402);
    expect(declined.text).to.include('<p class="alert" role="alert" id="decline">Your card was declined. (<code>card_declined</code>) Try another card.</p>');
    expect(declined.text).to.include('name="card_number" value="4000 0000 0000 0002"');
    expect(declined.text).to.not.include('value="123"');
    const poor = await post(checkout.url, { ...PAY, card_number: '4000000000009995' });
    expect(poor.status).to.equal(402);
    expect(poor.text).to.include('Your card has insufficient funds. (<code>insufficient_funds</code>)');
    expect((await get(checkout.url)).text).to.include('id="decline">Your card has insufficient funds.');
    expect(await provider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.equal({ status: 'failed', failure_code: 'insufficient_funds', failure_message: 'Your card has insufficient funds.' });
    expect((await post(checkout.url, PAY)).status).to.equal(303);
    const received = events();
    expect(received.map((event) => [event.kind, 'failure_code' in event ? event.failure_code : null])).to.deep.equal([
      ['checkout_failed', 'card_declined'],
      ['checkout_failed', 'insufficient_funds'],
      ['checkout_paid', null],
    ]);
    expect(new Set(received.map((event) => event.id)).size).to.equal(3);
  });

  it('refuses anything but a test card, a bad expiry or CVC, or a form without them: 400, the problems on the page, nothing sent', async () => {
    const checkout = await open();
    const wrong = await post(checkout.url, { card_number: '"><script>x</script>', expiry: '01/20', cvc: '1' });
    expect(wrong.status).to.equal(400);
    expect(wrong.text).to.include('Nothing was charged: check the card details below.');
    expect(wrong.text).to.include('value="&quot;&gt;&lt;script&gt;x&lt;/script&gt;"');
    expect(wrong.text).to.not.include('<script>');
    expect(wrong.text).to.include('id="card_number-error">This is not a sandbox test card');
    expect(wrong.text).to.include('id="expiry-error">The card has expired');
    expect(wrong.text).to.include('id="cvc-error">Enter the 3 or 4 digit security code.');
    const visa = await post(checkout.url, { ...PAY, card_number: '4111 1111 1111 1111' });
    expect(visa.status).to.equal(400);
    const empty = await post(checkout.url, {});
    expect(empty.status).to.equal(400);
    expect(empty.text).to.include('id="card_number-error">Enter a card number.');
    expect(receiver.deliveries).to.deep.equal([]);
    expect(await provider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.equal({ status: 'open' });
  });

  it('answers 404 for a checkout it does not know, 415 for a body that is not a form', async () => {
    for (const id of ['cs_sandbox_0000', 'cs%3Cscript%3E', 'x'.repeat(101)]) {
      const page = await get(`${server.url}/billing/sandbox/checkout/${id}`);
      expect(page.status, id).to.equal(404);
      expect(page.text).to.include('There is no checkout at this address.');
      expect((await post(`${server.url}/billing/sandbox/checkout/${id}`, PAY)).status).to.equal(404);
    }
    const checkout = await open();
    const json = await server.request('POST', new URL(checkout.url).pathname, { body: PAY });
    expect(json.status).to.equal(415);
    expect(json.json).to.deep.equal({ code: 'unsupported_media_type', message: 'send the body as application/x-www-form-urlencoded' });
    expect(receiver.deliveries).to.deep.equal([]);
  });

  it('retries the webhook while the platform refuses it, then sends the browser on', async () => {
    const checkout = await open();
    receiver.answerWith(503, 502);
    expect((await post(checkout.url, PAY)).status).to.equal(303);
    expect(receiver.deliveries).to.have.length(3);
    expect(new Set(events().map((event) => event.id)).size).to.equal(1);
  });

  it('sends the browser on even when the platform never takes the webhook; the checkout is paid all the same', async () => {
    const checkout = await open({ webhook_url: `${await deadAddress()}/api/v1/billing/webhook` });
    const paid = await post(checkout.url, PAY);
    expect(paid.status).to.equal(303);
    expect(paid.headers.get('location')).to.equal(`${receiver.url}/billing/done`);
    expect(await provider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.include({ status: 'paid' });
  });

  it('verifies webhook signatures with a 300 s tolerance: a stale, tampered or foreign one is refused', async () => {
    const checkout = await open();
    await post(checkout.url, PAY);
    const [{ body, headers }] = receiver.deliveries;
    const now = Math.floor(Date.now() / 1000);
    expect(provider.parseWebhook(body, headers).kind).to.equal('checkout_paid');
    expect(() => provider.parseWebhook(body, { [SANDBOX_SIGNATURE_HEADER]: signSandboxWebhook(SECRET, body, now - 301) })).to.throw(/300 s/);
    expect(provider.parseWebhook(body, { [SANDBOX_SIGNATURE_HEADER]: signSandboxWebhook(SECRET, body, now - 240) }).kind).to.equal('checkout_paid');
    expect(() => provider.parseWebhook(Buffer.from(body.toString().replace('"amount":4900', '"amount":1')), headers)).to.throw(/does not match/);
    expect(() => provider.parseWebhook(body, { [SANDBOX_SIGNATURE_HEADER]: signSandboxWebhook('another secret of enough length', body, now) })).to.throw(/does not match/);
    expect(() => provider.parseWebhook(body, {})).to.throw(/missing/);
  });
});

describe('the sandbox checkout page of an expired checkout', () => {
  it('answers 410 to look at it or pay it, and sends nothing', async () => {
    const clock = new ManualClock();
    const stores = embeddedStores(clock);
    const receiver = await startWebhookReceiver();
    const sandbox = new SandboxPaymentProvider({ readStore: stores.readStore, clock, webhookSecret: SECRET, publicUrl: null });
    const noMetrics = { observeRequest: () => undefined, render: async () => ({ contentType: 'text/plain', body: '' }) };
    const server: http.Server = createHttpServer(createHttpApp({ logger: silentLogger, metrics: noMetrics, bodyLimitBytes: 1024 * 1024, routers: [sandboxCheckoutPageRouter(sandbox)] }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const checkout = await sandbox.createCheckout({
        checkout_id: randomUUID(),
        tenant_id: randomUUID(),
        plan: { id: 'p', code: 'growth', name: 'Growth' },
        interval: 'month',
        amount: 100,
        currency: 'usd',
        customer_email: null,
        success_url: `${receiver.url}/done`,
        cancel_url: `${receiver.url}/billing`,
        webhook_url: `${receiver.url}/hook`,
        platform_url: base,
      });
      expect((await get(checkout.url)).status).to.equal(200);
      clock.advance(24 * 3600 * 1000);
      const page = await get(checkout.url);
      expect(page.status).to.equal(410);
      expect(page.text).to.include('This checkout has expired.');
      expect((await post(checkout.url, PAY)).status).to.equal(410);
      expect(receiver.deliveries).to.deep.equal([]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await receiver.close();
      await stores.dispose();
    }
  });
});

describe('the sandbox checkout page when the platform pays through Stripe', () => {
  it('picks Stripe when both keys are set, and answers 404 for every sandbox checkout page', async () => {
    const server = await startTestServer({ STRIPE_SECRET_KEY: 'sk_test_unused', STRIPE_WEBHOOK_SECRET: 'whsec_unused' });
    try {
      expect(server.platform.paymentProvider.name).to.equal('stripe');
      const page = await get(`${server.url}/billing/sandbox/checkout/cs_sandbox_00000000000000000000000000000000`);
      expect(page.status).to.equal(404);
      expect(page.text).to.include('The sandbox payment provider is not in use on this platform.');
      expect((await post(`${server.url}/billing/sandbox/checkout/cs_sandbox_0`, PAY)).status).to.equal(404);
    } finally {
      await server.close();
    }
  });
});
