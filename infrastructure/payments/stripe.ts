// The Stripe payment provider, through the official `stripe` package: a checkout is a
// Checkout Session (mode `payment`, one line item priced from the plan), webhooks are
// verified by the library's own signature check over the raw body (300 s tolerance), and
// `retrieveCheckout` reads the session back. Used when STRIPE_SECRET_KEY and
// STRIPE_WEBHOOK_SECRET are both set.
//
// Kept thin on purpose: Stripe's API cannot be reached from where this is built, so the
// calls are exercised against a local server speaking Stripe's wire format
// (tests/contract/payment-provider.test.ts), never against Stripe itself.
//
// Events mapped (enable these in the Stripe dashboard's webhook endpoint):
// - checkout.session.completed with payment_status `paid`, and
//   checkout.session.async_payment_succeeded -> checkout_paid;
// - checkout.session.async_payment_failed -> checkout_failed (a delayed method, such as a
//   bank debit, was refused after the session completed);
// - anything else -> other, checkout.session.expired included: an expired session is a
//   person who walked away, not a failed payment, so it adds nothing to the payment history.
// A card refused on Stripe's page is retried there by the person and is not reported as a
// failure (Stripe sends no checkout.session event for it).

import Stripe from 'stripe';
import type { Clock } from '../../application/ports/clock';
import {
  type CheckoutRequest,
  type PaymentProvider,
  PaymentProviderError,
  type ProviderCheckout,
  type ProviderCheckoutStatus,
  ProviderCheckoutNotFoundError,
  type ProviderEvent,
  WebhookSignatureError,
} from '../../application/ports/payment-provider';
import { signatureHeader } from './webhook-headers';

export const STRIPE_PROVIDER_NAME = 'stripe';
export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300;

export interface StripePaymentProviderOptions {
  secretKey: string;
  webhookSecret: string;
  clock: Clock;
  /** Tests only: a local server that speaks Stripe's wire format instead of api.stripe.com. */
  api?: { host: string; port: number; protocol: 'http' | 'https' };
}

const isoFromUnix = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** Stripe's failures as the port's: a missing session, or the provider failing us. */
function providerError(error: unknown, providerCheckoutId?: string): Error {
  if (error instanceof PaymentProviderError) return error;
  if (error instanceof Stripe.errors.StripeError) {
    if (providerCheckoutId !== undefined && error.statusCode === 404 && error.code === 'resource_missing') return new ProviderCheckoutNotFoundError(providerCheckoutId);
    return new PaymentProviderError(STRIPE_PROVIDER_NAME, `Stripe: ${error.message}${error.requestId ? ` (request ${error.requestId})` : ''}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}

/** Our checkout id on a session: `client_reference_id`, or the metadata we set. Null: not one of ours. */
function checkoutIdOf(session: Stripe.Checkout.Session): string | null {
  return session.client_reference_id ?? session.metadata?.checkout_id ?? null;
}

const idOf = (value: string | { id: string } | null): string | null => (value === null ? null : typeof value === 'string' ? value : value.id);

export class StripePaymentProvider implements PaymentProvider {
  readonly name = STRIPE_PROVIDER_NAME;
  private readonly stripe: Stripe;

  constructor(private readonly options: StripePaymentProviderOptions) {
    this.stripe = new Stripe(options.secretKey, { maxNetworkRetries: 2, timeout: 30_000, telemetry: false, ...options.api });
  }

  async createCheckout(request: CheckoutRequest): Promise<ProviderCheckout> {
    try {
      const session = await this.stripe.checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [{ quantity: 1, price_data: { currency: request.currency, unit_amount: request.amount, product_data: { name: `${request.plan.name} (one ${request.interval})` } } }],
          client_reference_id: request.checkout_id,
          metadata: { checkout_id: request.checkout_id, tenant_id: request.tenant_id, plan: request.plan.code, interval: request.interval },
          success_url: request.success_url,
          cancel_url: request.cancel_url,
          ...(request.customer_email ? { customer_email: request.customer_email } : {}),
        },
        // A retried call for the same checkout gets the session the first one opened.
        { idempotencyKey: `svc-checkout-${request.checkout_id}` },
      );
      if (!session.url) throw new PaymentProviderError(this.name, `Stripe answered Checkout Session ${session.id} without a URL`);
      return { provider_checkout_id: session.id, url: session.url, expires_at: isoFromUnix(session.expires_at) };
    } catch (error) {
      throw providerError(error);
    }
  }

  parseWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): ProviderEvent {
    const header = signatureHeader(headers, STRIPE_SIGNATURE_HEADER);
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, header, this.options.webhookSecret, STRIPE_SIGNATURE_TOLERANCE_SECONDS, undefined, this.options.clock.now().getTime());
    } catch (error) {
      if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new WebhookSignatureError(`Stripe signature: ${error.message}`);
      throw new WebhookSignatureError('the signed body is not JSON');
    }
    const envelope = event as unknown as { id?: unknown; type?: unknown; created?: unknown; data?: { object?: unknown } };
    if (typeof envelope?.id !== 'string' || typeof envelope.type !== 'string' || typeof envelope.created !== 'number') {
      throw new WebhookSignatureError('the signed body is not a Stripe event');
    }
    const occurred_at = isoFromUnix(event.created);
    const other: ProviderEvent = { id: event.id, kind: 'other', type: event.type, occurred_at };
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded': {
        const session = event.data.object;
        const checkout_id = checkoutIdOf(session);
        // Completed but unpaid: a delayed method still running; async_payment_* follows.
        if (checkout_id === null || session.payment_status !== 'paid') return other;
        return {
          id: event.id,
          kind: 'checkout_paid',
          checkout_id,
          provider_checkout_id: session.id,
          provider_payment_id: idOf(session.payment_intent) ?? session.id,
          amount: session.amount_total ?? 0,
          currency: session.currency ?? '',
          occurred_at,
        };
      }
      case 'checkout.session.async_payment_failed': {
        const session = event.data.object;
        const checkout_id = checkoutIdOf(session);
        if (checkout_id === null) return other;
        return {
          id: event.id,
          kind: 'checkout_failed',
          checkout_id,
          provider_checkout_id: session.id,
          failure_code: 'async_payment_failed',
          failure_message: 'The delayed payment method was refused after checkout.',
          amount: session.amount_total ?? 0,
          currency: session.currency ?? '',
          occurred_at,
        };
      }
      default:
        return other;
    }
  }

  async retrieveCheckout(providerCheckoutId: string): Promise<ProviderCheckoutStatus> {
    let session: Stripe.Checkout.Session;
    try {
      session = await this.stripe.checkout.sessions.retrieve(providerCheckoutId, { expand: ['payment_intent.latest_charge'] });
    } catch (error) {
      throw providerError(error, providerCheckoutId);
    }
    const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
    if (session.payment_status === 'paid') {
      const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
      return {
        status: 'paid',
        provider_payment_id: idOf(session.payment_intent) ?? session.id,
        amount: session.amount_total ?? 0,
        currency: session.currency ?? '',
        // When the charge was made; a session has no time of payment of its own.
        paid_at: isoFromUnix(charge?.created ?? session.created),
      };
    }
    if (session.status === 'expired') return { status: 'expired' };
    const refusal = intent?.last_payment_error;
    if (session.status === 'complete' && refusal) {
      return { status: 'failed', failure_code: refusal.decline_code ?? refusal.code ?? 'payment_failed', failure_message: refusal.message ?? 'The payment was refused.' };
    }
    return { status: 'open' };
  }
}
