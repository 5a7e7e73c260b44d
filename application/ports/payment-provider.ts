// The payment provider port: where a tenant pays for a plan. Two adapters implement it: the
// embedded sandbox (infrastructure/payments/sandbox.ts, a hosted checkout page the platform
// serves itself under /billing/sandbox/) and Stripe (infrastructure/payments/stripe.ts,
// Checkout Sessions). Either way the outcome of a checkout reaches the platform through a
// signed webhook (`parseWebhook`), or through `retrieveCheckout` when the client confirms.

export type BillingInterval = 'month' | 'year';
export const BILLING_INTERVALS: readonly BillingInterval[] = ['month', 'year'];

/** What the platform asks the provider to collect: one period of one plan. */
export interface CheckoutRequest {
  /** Ours; the provider echoes it back in its events (Stripe: `client_reference_id`). */
  checkout_id: string;
  tenant_id: string;
  plan: { id: string; code: string; name: string };
  interval: BillingInterval;
  /** In minor units (cents). */
  amount: number;
  /** ISO 4217, lowercase (`usd`). */
  currency: string;
  customer_email: string | null;
  /** Where the payer's browser goes after paying, and after giving up. */
  success_url: string;
  cancel_url: string;
  /**
   * Where the platform receives the provider's webhooks. A real provider is told this once in
   * its dashboard; the sandbox posts to it after each payment attempt.
   */
  webhook_url: string;
  /**
   * The platform's base URL as the caller reached it (scheme, host and any path prefix, no
   * trailing slash; the origin of the request that opened the checkout). The sandbox serves
   * its checkout page there when `PUBLIC_URL` is unset; Stripe ignores it.
   */
  platform_url?: string;
}

/** The provider's checkout: the page the payer opens. */
export interface ProviderCheckout {
  provider_checkout_id: string;
  url: string;
  expires_at: string;
}

/** A payment attempt the provider reports, in the provider's words mapped to ours. */
export type ProviderEvent =
  | {
      /** The provider's event id: the same event delivered twice carries the same id. */
      id: string;
      kind: 'checkout_paid';
      checkout_id: string;
      provider_checkout_id: string;
      provider_payment_id: string;
      amount: number;
      currency: string;
      occurred_at: string;
    }
  | {
      id: string;
      kind: 'checkout_failed';
      checkout_id: string;
      provider_checkout_id: string;
      /** The provider's decline code (`card_declined`, `insufficient_funds`, ...). */
      failure_code: string;
      failure_message: string;
      amount: number;
      currency: string;
      occurred_at: string;
    }
  /** An event type the platform does not act on; it is acknowledged and recorded, nothing more. */
  | { id: string; kind: 'other'; type: string; occurred_at: string };

/**
 * What the provider knows of one checkout right now: `open` until someone pays it or it
 * expires; `failed` while the last attempt was refused (the payer may still try again and
 * turn it `paid`); `paid` for good.
 */
export type ProviderCheckoutStatus =
  | { status: 'open' | 'expired' }
  | { status: 'paid'; provider_payment_id: string; amount: number; currency: string; paid_at: string }
  | { status: 'failed'; failure_code: string; failure_message: string };

/** A webhook whose signature is missing, wrong or older than the tolerance: answered 400, nothing recorded. */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

/** `retrieveCheckout` of a checkout the provider does not know. */
export class ProviderCheckoutNotFoundError extends Error {
  constructor(readonly providerCheckoutId: string) {
    super(`the payment provider has no checkout ${providerCheckoutId}`);
    this.name = 'ProviderCheckoutNotFoundError';
  }
}

/**
 * The provider could not be reached, or refused the call (a bad API key, a rejected
 * parameter): the platform's fault or the provider's, never the payer's, so a route answers
 * it as 502, not with the provider's own status.
 */
export class PaymentProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message);
    this.name = 'PaymentProviderError';
  }
}

export interface PaymentProvider {
  /** `sandbox` or `stripe`: recorded on every checkout and payment. */
  readonly name: string;
  /** Opens a checkout for one period of a plan; the same `checkout_id` again gives the same checkout. PaymentProviderError when the provider fails. */
  createCheckout(request: CheckoutRequest): Promise<ProviderCheckout>;
  /**
   * Verifies the signature over the exact raw body and parses the event; WebhookSignatureError
   * when it fails, and for a signed body that is not an event of this provider.
   */
  parseWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): ProviderEvent;
  /** Asks the provider for the checkout's state (POST /billing/confirm); ProviderCheckoutNotFoundError, PaymentProviderError. */
  retrieveCheckout(providerCheckoutId: string): Promise<ProviderCheckoutStatus>;
}
