// The PaymentProvider contract, run against every adapter (payment-provider.test.ts): what
// the billing use cases may rely on whichever provider is configured. Each fixture makes the
// provider's side happen as that provider does it (a person paying on the sandbox's page, a
// Stripe session completing) and hands over the webhook exactly as it would arrive.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderCheckout,
  ProviderCheckoutNotFoundError,
  type ProviderEvent,
  WebhookSignatureError,
} from '../../application/ports/payment-provider';
import type { ManualClock } from '../support/stores';

/** A webhook as it reaches the platform: the exact bytes and the headers. */
export interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

export interface PaymentProviderFixture {
  provider: PaymentProvider;
  /** The provider's clock: signatures are checked against it. */
  clock: ManualClock;
  /** The header the provider signs its webhooks in. */
  signatureHeader: string;
  /** Where the checkouts of the contract send their webhooks. */
  webhookUrl: string;
  /** The payer pays the checkout; the webhook the provider sends about it. */
  pay(checkout: ProviderCheckout): Promise<Delivery>;
  /** A payment of the checkout is refused; the webhook the provider sends about it. */
  refuse(checkout: ProviderCheckout): Promise<Delivery>;
  /** `body` signed as the provider signs, at `timestampSeconds`, with its secret or `secret`. */
  sign(body: Buffer, timestampSeconds: number, secret?: string): Record<string, string>;
  /** The body of a webhook of a type the platform does not act on (not signed). */
  otherEventBody(): Buffer;
  dispose(): Promise<void>;
}

export function paymentProviderContract(createFixture: () => Promise<PaymentProviderFixture>): void {
  let fixture: PaymentProviderFixture;

  beforeEach(async () => {
    fixture = await createFixture();
  });
  afterEach(() => fixture.dispose());

  const request = (overrides: Partial<CheckoutRequest> = {}): CheckoutRequest => ({
    checkout_id: randomUUID(),
    tenant_id: randomUUID(),
    plan: { id: randomUUID(), code: 'growth', name: 'Growth' },
    interval: 'month',
    amount: 4900,
    currency: 'usd',
    customer_email: 'owner@example.com',
    success_url: 'https://app.example.com/billing/done',
    cancel_url: 'https://app.example.com/billing',
    webhook_url: fixture.webhookUrl,
    platform_url: 'https://svc.example.com',
    ...overrides,
  });

  const nowSeconds = (): number => Math.floor(fixture.clock.now().getTime() / 1000);

  function refusal(delivery: Delivery): WebhookSignatureError {
    try {
      fixture.provider.parseWebhook(delivery.body, delivery.headers);
    } catch (error) {
      expect(error).to.be.instanceOf(WebhookSignatureError);
      return error as WebhookSignatureError;
    }
    expect.fail('the webhook was accepted');
  }

  describe('checkouts', () => {
    it('opens a checkout: its id, an absolute http(s) URL to pay at, and an expiry in the future', async () => {
      const checkout = await fixture.provider.createCheckout(request());
      expect(checkout.provider_checkout_id).to.be.a('string').and.not.equal('');
      expect(new URL(checkout.url).protocol).to.match(/^https?:$/);
      expect(Date.parse(checkout.expires_at)).to.be.greaterThan(fixture.clock.now().getTime());
    });

    it('gives the checkout it opened when asked again for the same checkout id', async () => {
      const asked = request();
      const first = await fixture.provider.createCheckout(asked);
      const again = await fixture.provider.createCheckout(asked);
      expect(again).to.deep.equal(first);
      expect((await fixture.provider.createCheckout(request())).provider_checkout_id).to.not.equal(first.provider_checkout_id);
    });

    it('knows a new checkout as open, and refuses one it never opened with ProviderCheckoutNotFoundError', async () => {
      const checkout = await fixture.provider.createCheckout(request());
      expect(await fixture.provider.retrieveCheckout(checkout.provider_checkout_id)).to.deep.equal({ status: 'open' });
      const missing = await fixture.provider.retrieveCheckout(`${checkout.provider_checkout_id}x`).catch((error: unknown) => error);
      expect(missing).to.be.instanceOf(ProviderCheckoutNotFoundError);
    });
  });

  describe('outcomes', () => {
    it('reports a payment by a signed checkout_paid webhook, and as paid when asked', async () => {
      const asked = request();
      const checkout = await fixture.provider.createCheckout(asked);
      const delivery = await fixture.pay(checkout);
      const event = fixture.provider.parseWebhook(delivery.body, delivery.headers);
      expect(event).to.deep.include({ kind: 'checkout_paid', checkout_id: asked.checkout_id, provider_checkout_id: checkout.provider_checkout_id, amount: 4900, currency: 'usd' });
      const paid = event as Extract<ProviderEvent, { kind: 'checkout_paid' }>;
      expect(paid.id).to.be.a('string').and.not.equal('');
      expect(paid.provider_payment_id).to.be.a('string').and.not.equal('');
      expect(Number.isNaN(Date.parse(paid.occurred_at))).to.equal(false);
      const status = await fixture.provider.retrieveCheckout(checkout.provider_checkout_id);
      expect(status).to.deep.include({ status: 'paid', provider_payment_id: paid.provider_payment_id, amount: 4900, currency: 'usd' });
      expect(Number.isNaN(Date.parse((status as { paid_at: string }).paid_at))).to.equal(false);
    });

    it('reports a refused payment by a signed checkout_failed webhook, and as failed when asked', async () => {
      const asked = request();
      const checkout = await fixture.provider.createCheckout(asked);
      const delivery = await fixture.refuse(checkout);
      const event = fixture.provider.parseWebhook(delivery.body, delivery.headers);
      expect(event).to.deep.include({ kind: 'checkout_failed', checkout_id: asked.checkout_id, provider_checkout_id: checkout.provider_checkout_id, amount: 4900, currency: 'usd' });
      const failed = event as Extract<ProviderEvent, { kind: 'checkout_failed' }>;
      expect(failed.failure_code).to.match(/^[a-z_]+$/);
      expect(failed.failure_message).to.not.equal('');
      const status = await fixture.provider.retrieveCheckout(checkout.provider_checkout_id);
      expect(status.status).to.equal('failed');
    });

    it('maps an event type it does not act on to `other`, with the event id and type', () => {
      const body = fixture.otherEventBody();
      const event = fixture.provider.parseWebhook(body, fixture.sign(body, nowSeconds()));
      const sent = JSON.parse(body.toString('utf8')) as { id: string; type: string };
      expect(event).to.deep.include({ kind: 'other', id: sent.id, type: sent.type });
    });
  });

  describe('webhook signatures', () => {
    it('refuses a webhook without the signature header, with it twice, or signed with another secret', async () => {
      const checkout = await fixture.provider.createCheckout(request());
      const { body, headers } = await fixture.pay(checkout);
      const unsigned = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== fixture.signatureHeader));
      expect(refusal({ body, headers: unsigned }).message).to.match(/missing/);
      const twice = fixture.provider.parseWebhook.bind(fixture.provider, body, { ...unsigned, [fixture.signatureHeader]: [headers[fixture.signatureHeader], headers[fixture.signatureHeader]] });
      expect(twice).to.throw(WebhookSignatureError, /more than once/);
      refusal({ body, headers: fixture.sign(body, nowSeconds(), 'whsec_another_secret_entirely') });
    });

    it('refuses a webhook signed more than 300 s ago, and accepts one signed 299 s ago', async () => {
      const checkout = await fixture.provider.createCheckout(request());
      const { body } = await fixture.pay(checkout);
      refusal({ body, headers: fixture.sign(body, nowSeconds() - 301) });
      expect(fixture.provider.parseWebhook(body, fixture.sign(body, nowSeconds() - 299)).kind).to.equal('checkout_paid');
    });

    it('refuses a body changed after signing, however little', async () => {
      const checkout = await fixture.provider.createCheckout(request());
      const { body, headers } = await fixture.pay(checkout);
      const tampered = Buffer.from(body.toString('utf8').replace('4900', '4901'), 'utf8');
      expect(tampered.equals(body)).to.equal(false);
      expect(refusal({ body: tampered, headers }).message).to.match(/signature|match/i);
      refusal({ body: Buffer.concat([body, Buffer.from(' ')]), headers });
    });

    it('refuses a signed body that is not an event of the provider', () => {
      for (const text of ['not json', '[]', '{"id": 1}']) {
        const body = Buffer.from(text);
        refusal({ body, headers: fixture.sign(body, nowSeconds()) });
      }
    });
  });
}
