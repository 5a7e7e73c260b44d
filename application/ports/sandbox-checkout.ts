// The hosted checkout page of the embedded sandbox payment provider: what the page shows and
// what paying on it does. The sandbox (infrastructure/payments/sandbox.ts) implements it next
// to PaymentProvider; the page's router (adapters/http/billing/sandbox-page.ts) calls it. It
// stands in for a real provider's own website, so nothing here is the platform's domain: the
// outcome reaches the platform only through the signed webhook the sandbox sends.

import type { BillingInterval } from './payment-provider';

/** One checkout as its page shows it. */
export interface SandboxCheckoutView {
  provider_checkout_id: string;
  plan_name: string;
  interval: BillingInterval;
  /** Minor units. */
  amount: number;
  currency: string;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  status: 'open' | 'paid' | 'expired';
  /** The refusal of the last attempt, while the checkout is unpaid. */
  last_failure: { failure_code: string; failure_message: string } | null;
  expires_at: string;
}

/** What the payer typed: nothing of it is kept but the card's last four digits. */
export interface CardEntry {
  card_number: string;
  expiry: string;
  cvc: string;
}

export type CardField = keyof CardEntry;

export type SandboxPaymentOutcome =
  /** Paid: the browser goes to `redirect_to` (the success URL). */
  | { outcome: 'paid'; redirect_to: string; webhook_delivered: boolean }
  /** The test card asks for a refusal; the payer may try another card. */
  | { outcome: 'declined'; failure_code: string; failure_message: string; webhook_delivered: boolean }
  /** Not a test card, or a bad expiry or CVC: nothing was charged and nothing sent. */
  | { outcome: 'invalid'; problems: Array<{ field: CardField; message: string }> }
  | { outcome: 'already_paid'; success_url: string }
  | { outcome: 'expired' }
  | { outcome: 'not_found' };

/** A documented test card: its number as people read it, and what paying with it does. */
export interface SandboxTestCardDescription {
  number: string;
  description: string;
}

export interface SandboxCheckoutPages {
  /** The test cards the page lists; any other number is refused before anything is charged. */
  readonly testCards: readonly SandboxTestCardDescription[];
  /** The checkout behind the page, or null when the sandbox has none by that id. */
  view(providerCheckoutId: string): Promise<SandboxCheckoutView | null>;
  /** Charges a test card; sends the outcome's signed webhook before answering. */
  pay(providerCheckoutId: string, card: CardEntry): Promise<SandboxPaymentOutcome>;
}
