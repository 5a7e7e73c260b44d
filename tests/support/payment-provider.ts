// A payment provider for tests, implementing the port as the real adapters do: checkouts with
// their own ids, URLs and expiry; the state of a checkout as the provider knows it; webhooks
// signed with HMAC-SHA256 over `<timestamp>.<raw body>` (header `Test-Signature:
// t=<unix seconds>,v1=<hex>`), refused when the signature is missing, wrong or older than the
// tolerance, as Stripe's are. What a payer does on the provider's page (`pay`, `decline`)
// changes the checkout and answers the webhook the provider would send about it; the test
// delivers it, once or many times, to POST /api/v1/billing/webhook.

import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../application/ports/clock';
import {
  type CheckoutRequest,
  type PaymentProvider,
  type ProviderCheckout,
  type ProviderCheckoutStatus,
  type ProviderEvent,
  PaymentProviderError,
  WebhookSignatureError,
} from '../../application/ports/payment-provider';

export const TEST_SIGNATURE_HEADER = 'test-signature';
const CHECKOUT_TTL_MS = 24 * 3600 * 1000;

interface TestCheckout {
  id: string;
  request: CheckoutRequest;
  expires_at: string;
  status: ProviderCheckoutStatus;
}

/** A webhook as the provider sends it: the exact body and its headers. */
export interface SignedWebhook {
  body: string;
  headers: Record<string, string>;
  event: ProviderEvent;
}

export class TestPaymentProvider implements PaymentProvider {
  readonly name = 'test';
  private readonly checkouts = new Map<string, TestCheckout>();
  /** Every checkout request the platform made, oldest first. */
  readonly requests: CheckoutRequest[] = [];
  /** While true the provider cannot be reached: its API calls fail as an adapter reports it. */
  down = false;

  constructor(
    private readonly clock: Clock,
    private readonly secret = randomBytes(32).toString('hex'),
    private readonly toleranceSeconds = 300,
  ) {}

  async createCheckout(request: CheckoutRequest): Promise<ProviderCheckout> {
    if (this.down) throw new PaymentProviderError(this.name, 'the provider cannot be reached');
    this.requests.push(request);
    // The same checkout id again is the same checkout (a retried request).
    const existing = [...this.checkouts.values()].find((checkout) => checkout.request.checkout_id === request.checkout_id);
    const checkout = existing ?? {
      id: `tpc_${randomUUID()}`,
      request,
      expires_at: new Date(this.clock.now().getTime() + CHECKOUT_TTL_MS).toISOString(),
      status: { status: 'open' as const },
    };
    this.checkouts.set(checkout.id, checkout);
    return { provider_checkout_id: checkout.id, url: `https://payments.test/checkout/${checkout.id}`, expires_at: checkout.expires_at };
  }

  async retrieveCheckout(providerCheckoutId: string): Promise<ProviderCheckoutStatus> {
    if (this.down) throw new PaymentProviderError(this.name, 'the provider cannot be reached');
    const checkout = this.checkout(providerCheckoutId);
    if (checkout.status.status !== 'paid' && Date.parse(checkout.expires_at) <= this.clock.now().getTime()) checkout.status = { status: 'expired' };
    return checkout.status;
  }

  parseWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): ProviderEvent {
    const header = headers[TEST_SIGNATURE_HEADER];
    if (typeof header !== 'string') throw new WebhookSignatureError(`no ${TEST_SIGNATURE_HEADER} header`);
    const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
    const timestamp = Number(parts.t);
    if (!Number.isInteger(timestamp) || typeof parts.v1 !== 'string') throw new WebhookSignatureError('the signature header is malformed');
    const expected = Buffer.from(this.signature(timestamp, rawBody), 'hex');
    const given = Buffer.from(parts.v1, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new WebhookSignatureError('the signature does not match the body');
    if (Math.abs(this.clock.now().getTime() / 1000 - timestamp) > this.toleranceSeconds) throw new WebhookSignatureError('the signature is older than the tolerance');
    let event: unknown;
    try {
      event = JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new WebhookSignatureError('the signed body is not an event');
    }
    if (typeof event !== 'object' || event === null || typeof (event as { id?: unknown }).id !== 'string') throw new WebhookSignatureError('the signed body is not an event');
    return event as ProviderEvent;
  }

  /** The provider's checkout for the platform's checkout id. */
  checkoutOf(checkoutId: string): string {
    const found = [...this.checkouts.values()].find((checkout) => checkout.request.checkout_id === checkoutId);
    if (!found) throw new Error(`the platform opened no checkout ${checkoutId} here`);
    return found.id;
  }

  /** The payer pays with a good card: the checkout is paid, and this is the webhook about it. */
  pay(checkoutId: string): SignedWebhook {
    const checkout = this.checkout(this.checkoutOf(checkoutId));
    const paidAt = this.clock.now().toISOString();
    const paymentId = checkout.status.status === 'paid' ? checkout.status.provider_payment_id : `tpp_${randomUUID()}`;
    checkout.status = { status: 'paid', provider_payment_id: paymentId, amount: checkout.request.amount, currency: checkout.request.currency, paid_at: paidAt };
    return this.sign({
      id: `tev_${randomUUID()}`,
      kind: 'checkout_paid',
      checkout_id: checkoutId,
      provider_checkout_id: checkout.id,
      provider_payment_id: paymentId,
      amount: checkout.request.amount,
      currency: checkout.request.currency,
      occurred_at: paidAt,
    });
  }

  /** The payer's card is declined: the checkout stays payable, and this is the webhook about the attempt. */
  decline(checkoutId: string, failureCode = 'card_declined'): SignedWebhook {
    const checkout = this.checkout(this.checkoutOf(checkoutId));
    checkout.status = { status: 'failed', failure_code: failureCode, failure_message: 'Your card was declined.' };
    return this.sign({
      id: `tev_${randomUUID()}`,
      kind: 'checkout_failed',
      checkout_id: checkoutId,
      provider_checkout_id: checkout.id,
      failure_code: failureCode,
      failure_message: 'Your card was declined.',
      amount: checkout.request.amount,
      currency: checkout.request.currency,
      occurred_at: this.clock.now().toISOString(),
    });
  }

  /** Signs an event as the provider does, at `signedAt` (now by default). */
  sign(event: ProviderEvent, signedAt: Date = this.clock.now()): SignedWebhook {
    const body = JSON.stringify(event);
    const timestamp = Math.floor(signedAt.getTime() / 1000);
    return { body, event, headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: `t=${timestamp},v1=${this.signature(timestamp, Buffer.from(body))}` } };
  }

  private signature(timestamp: number, body: Buffer): string {
    return createHmac('sha256', this.secret).update(`${timestamp}.`).update(body).digest('hex');
  }

  private checkout(providerCheckoutId: string): TestCheckout {
    const checkout = this.checkouts.get(providerCheckoutId);
    if (!checkout) throw new Error(`no checkout ${providerCheckoutId}`);
    return checkout;
  }
}
