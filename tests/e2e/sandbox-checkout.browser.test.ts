// The sandbox's hosted checkout page completed by a real browser: headless Chromium (Debian's
// `chromium` package at /usr/bin/chromium, driven by playwright-core; nothing is downloaded)
// against the real platform server. The checkout is opened through the payment provider with
// its webhook URL on a local receiver, which stands where POST /api/v1/billing/webhook will be.
// Without /usr/bin/chromium the suite reports itself skipped and says why (.ci/run installs it).

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { CheckoutRequest, ProviderCheckout } from '../../application/ports/payment-provider';
import { launchChromium, skipUnlessChromium } from '../support/browser';
import { registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';


describe('the sandbox checkout page in headless Chromium', function () {
  this.timeout(60_000);
  let server: TestServer | null = null;
  let receiver: WebhookReceiver | null = null;
  let browser: Browser | null = null;
  let page: Page | null = null;

  before(async function () {
    skipUnlessChromium(this);
    receiver = await startWebhookReceiver();
    server = await startTestServer();
    browser = await launchChromium();
  });
  beforeEach(async () => {
    page = await browser!.newPage();
    receiver!.deliveries.length = 0;
  });
  afterEach(async () => {
    await page?.close();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await receiver?.close();
  });

  async function openCheckout(): Promise<{ asked: CheckoutRequest; checkout: ProviderCheckout }> {
    const asked: CheckoutRequest = {
      checkout_id: randomUUID(),
      tenant_id: randomUUID(),
      plan: { id: randomUUID(), code: 'growth', name: 'Growth' },
      interval: 'month',
      amount: 4900,
      currency: 'usd',
      customer_email: 'owner@example.com',
      success_url: `${receiver!.url}/billing/done`,
      cancel_url: `${receiver!.url}/billing`,
      webhook_url: `${receiver!.url}/api/v1/billing/webhook`,
      platform_url: server!.url,
    };
    return { asked, checkout: await server!.platform.paymentProvider.createCheckout(asked) };
  }

  async function payWith(cardNumber: string): Promise<void> {
    await page!.fill('#card_number', cardNumber);
    await page!.fill('#expiry', '12/40');
    await page!.fill('#cvc', '123');
    await page!.click('#pay');
  }

  const received = () => receiver!.deliveries.map((delivery) => server!.platform.paymentProvider.parseWebhook(delivery.body, delivery.headers));

  it('pays with 4242 4242 4242 4242: the browser lands on the success URL and the platform gets one signed checkout_paid', async () => {
    const { asked, checkout } = await openCheckout();
    await page!.goto(checkout.url);
    expect(await page!.textContent('h1')).to.equal('Growth');
    expect(await page!.textContent('#amount')).to.equal('$49.00 per month');
    // The page's only style is allowed by its hash in the Content-Security-Policy: it applies.
    expect(await page!.evaluate("getComputedStyle(document.getElementById('pay')).backgroundColor")).to.equal('rgb(59, 91, 219)');
    await Promise.all([page!.waitForURL(asked.success_url), payWith('4242 4242 4242 4242')]);
    expect(page!.url()).to.equal(asked.success_url);
    expect(await page!.textContent('#landed')).to.equal('Back at the platform');
    const events = received();
    expect(events).to.have.length(1);
    expect(events[0]).to.deep.include({ kind: 'checkout_paid', checkout_id: asked.checkout_id, provider_checkout_id: checkout.provider_checkout_id, amount: 4900, currency: 'usd' });
    expect(await server!.platform.paymentProvider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.include({ status: 'paid' });
  });

  it('declines 4000 0000 0000 0002: the page shows the refusal and the platform gets checkout_failed; another card then pays', async () => {
    const { asked, checkout } = await openCheckout();
    await page!.goto(checkout.url);
    await payWith('4000 0000 0000 0002');
    const refusal = await page!.waitForSelector('#decline');
    expect(await refusal.textContent()).to.equal('Your card was declined. (card_declined) Try another card.');
    expect(page!.url()).to.equal(checkout.url);
    expect(received()).to.have.length(1);
    expect(received()[0]).to.deep.include({ kind: 'checkout_failed', checkout_id: asked.checkout_id, failure_code: 'card_declined' });
    await Promise.all([page!.waitForURL(asked.success_url), payWith('4242 4242 4242 4242')]);
    expect(received().map((event) => event.kind)).to.deep.equal(['checkout_failed', 'checkout_paid']);
  });

  it('refuses a number that is not a test card on the page itself, and sends nothing', async () => {
    const { checkout } = await openCheckout();
    await page!.goto(checkout.url);
    await payWith('4111 1111 1111 1111');
    const problem = await page!.waitForSelector('#card_number-error');
    expect(await problem.textContent()).to.match(/^This is not a sandbox test card/);
    expect(receiver!.deliveries).to.deep.equal([]);
  });
});

describe('a plan bought in headless Chromium, from the console to an active subscription', function () {
  this.timeout(60_000);
  let server: TestServer | null = null;
  let console_: WebhookReceiver | null = null;
  let browser: Browser | null = null;

  before(async function () {
    skipUnlessChromium(this);
    // Stands where the console is: the page sends the payer back there.
    console_ = await startWebhookReceiver();
    server = await startTestServer({ SCRYPT_LOG_N: '12', BILLING_RETURN_URL: `${console_.url}/billing` });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    await console_?.close();
  });

  it('opens the checkout through POST /billing/checkout, pays on the hosted page, and the platform learns it only from the signed webhook', async () => {
    const owner = await registerOwner(server!, 'chromium-buyer');
    const as = { authorization: `Bearer ${owner.token}` };
    const checkout = await server!.request('POST', '/api/v1/billing/checkout', { headers: as, body: { plan_code: 'growth', interval: 'year' } });
    expect(checkout.status).to.equal(201);
    const page = await browser!.newPage();
    await page.goto(checkout.json.url);
    expect(await page.textContent('h1')).to.equal('Growth');
    await page.fill('#card_number', '4242 4242 4242 4242');
    await page.fill('#expiry', '12/40');
    await page.fill('#cvc', '123');
    await Promise.all([page.waitForURL(/\/billing\?/), page.click('#pay')]);
    const landed = new URL(page.url());
    expect(landed.searchParams.get('checkout')).to.equal('success');
    expect(landed.searchParams.get('checkout_id')).to.equal(checkout.json.id);
    await page.close();

    // The sandbox delivered its webhook before it sent the browser on: the plan applies now.
    const subscription = await server!.request('GET', '/api/v1/billing/subscription', { headers: as });
    expect(subscription.json).to.deep.include({ status: 'active', interval: 'year' });
    expect(subscription.json.plan.code).to.equal('growth');
    const payments = await server!.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['PaymentSucceeded', 'ProviderEventReceived'] }, maxCount: 1000 });
    expect(payments.map((event) => event.type)).to.deep.equal(['PaymentSucceeded', 'ProviderEventReceived']);
    expect(payments.map((event) => event.metadata.actor)).to.deep.equal([
      { kind: 'system', id: 'payment_provider:sandbox' },
      { kind: 'system', id: 'payment_provider:sandbox' },
    ]);
  });
});
