// The embedded sandbox payment provider: works end to end with no outside service, and
// behaves as a real provider does. A checkout answers with the URL of a hosted checkout
// page that the platform serves itself (adapters/http/billing/sandbox-page.ts, under
// /billing/sandbox/); there a person pays with a documented test card or makes it fail.
// The outcome reaches the platform only through a signed webhook POSTed over HTTP to the
// checkout's webhook URL, exactly as a real provider's would:
//
//   svc-sandbox-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
//
// Its own state (which checkouts exist, which charges were made) is the simulated
// provider's database, not the platform's domain state: it lives in two read-store
// collections (`sandbox_checkouts`, `sandbox_charges`) so that it works the same with
// several processes and with MongoDB, and no event of the platform's log records it. The
// platform learns what happened from the webhook or from `retrieveCheckout`, as it would
// from Stripe.
//
// A checkout is paid at most once: a successful charge claims the checkout in a unique
// index, so two payments racing (two tabs, two processes) leave one charge and one
// `checkout.paid` webhook. A failed delivery of the webhook (the platform down) is retried
// a few times with a short back-off before the page answers; the person sees the outcome
// either way, and the platform still finds it through `retrieveCheckout` (POST
// /billing/confirm). The card number is never stored: a charge keeps its last four digits.

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isLeft } from 'fp-ts/Either';
import * as t from 'io-ts';
import type { Clock } from '../../application/ports/clock';
import { type Logger, silentLogger } from '../../application/ports/logger';
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
import { type Collection, type ReadStore, UniqueConstraintError } from '../../application/ports/read-store';
import type {
  CardEntry,
  CardField,
  SandboxCheckoutPages,
  SandboxCheckoutView,
  SandboxPaymentOutcome,
  SandboxTestCardDescription,
} from '../../application/ports/sandbox-checkout';
import { pause } from '../../application/shared/lease';
import { signatureHeader } from './webhook-headers';

export const SANDBOX_PROVIDER_NAME = 'sandbox';
export const SANDBOX_SIGNATURE_HEADER = 'svc-sandbox-signature';
/** How far a webhook's timestamp may be from now, either way. */
export const SANDBOX_SIGNATURE_TOLERANCE_SECONDS = 300;
/** Where the platform serves the hosted checkout page: `<base>/billing/sandbox/checkout/<id>`. */
export const SANDBOX_CHECKOUT_PATH = '/billing/sandbox/checkout';
export const SANDBOX_CHECKOUTS = 'sandbox_checkouts';
export const SANDBOX_CHARGES = 'sandbox_charges';

/** The sandbox's wire names of its two webhook events. */
export const SANDBOX_EVENT_TYPES = { paid: 'checkout.paid', failed: 'checkout.payment_failed' } as const;

export type SandboxTestCard =
  | { number: string; outcome: 'paid'; description: string }
  | { number: string; outcome: 'declined'; failure_code: string; failure_message: string; description: string };

/** The documented test cards, as payment providers document theirs. Any other number is refused before anything is charged. */
export const SANDBOX_TEST_CARDS: readonly SandboxTestCard[] = [
  { number: '4242424242424242', outcome: 'paid', description: 'succeeds' },
  { number: '4000000000000002', outcome: 'declined', failure_code: 'card_declined', failure_message: 'Your card was declined.', description: 'is declined (card_declined)' },
  {
    number: '4000000000009995',
    outcome: 'declined',
    failure_code: 'insufficient_funds',
    failure_message: 'Your card has insufficient funds.',
    description: 'is declined (insufficient_funds)',
  },
];

const TEST_CARDS = new Map(SANDBOX_TEST_CARDS.map((card) => [card.number, card]));

/** `4242 4242 4242 4242`: a card number as people read it. */
export const spacedCardNumber = (digits: string): string => digits.replace(/(\d{4})(?=\d)/g, '$1 ');

/**
 * The webhook secret when BILLING_SANDBOX_WEBHOOK_SECRET is unset: derived from the
 * platform's data key, so every process sharing the keys agrees on it, and it is never
 * written anywhere.
 */
export function deriveSandboxWebhookSecret(dataKey: Buffer): string {
  return `whsec_sandbox_${createHmac('sha256', dataKey).update('svc billing sandbox webhook secret v1').digest('hex')}`;
}

function signatureOver(secret: string, timestampSeconds: number, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest();
}

const bytesOf = (body: Buffer | string): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : body);

/** The `svc-sandbox-signature` header value for `body` sent at `timestampSeconds`. */
export function signSandboxWebhook(secret: string, body: Buffer | string, timestampSeconds: number): string {
  return `t=${timestampSeconds},v1=${signatureOver(secret, timestampSeconds, bytesOf(body)).toString('hex')}`;
}

/** Throws WebhookSignatureError unless `header` signs `body` with `secret` within the tolerance of `nowSeconds`. */
export function verifySandboxSignature(secret: string, body: Buffer, header: string, nowSeconds: number, toleranceSeconds = SANDBOX_SIGNATURE_TOLERANCE_SECONDS): void {
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals < 0) continue;
    const key = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    // Several v1 values may come while a secret is being rolled over: any one may match.
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === null) throw new WebhookSignatureError(`the ${SANDBOX_SIGNATURE_HEADER} header has no timestamp (t=)`);
  if (signatures.length === 0) throw new WebhookSignatureError(`the ${SANDBOX_SIGNATURE_HEADER} header has no v1 signature`);
  // Both ways: a timestamp far in the future would otherwise make a captured webhook replayable for longer.
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) throw new WebhookSignatureError(`the signature's timestamp is more than ${toleranceSeconds} s away from now`);
  const expected = signatureOver(secret, timestamp, body);
  if (!signatures.some((signature) => timingSafeEqual(signature, expected))) throw new WebhookSignatureError('the signature does not match the body');
}

// ------------------------------------------------------------------- the webhook on the wire

const SandboxEnvelope = t.type({ id: t.string, type: t.string, created_at: t.string, data: t.unknown });
const PaidData = t.type({ provider_checkout_id: t.string, checkout_id: t.string, provider_payment_id: t.string, amount: t.number, currency: t.string });
const FailedData = t.type({
  provider_checkout_id: t.string,
  checkout_id: t.string,
  failure_code: t.string,
  failure_message: t.string,
  amount: t.number,
  currency: t.string,
});

interface SandboxEvent {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

function decoded<A>(codec: t.Decoder<unknown, A>, value: unknown): A {
  const result = codec.decode(value);
  if (isLeft(result)) throw new WebhookSignatureError('the signed body is not a sandbox event');
  return result.right;
}

function eventOf(rawBody: Buffer): ProviderEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookSignatureError('the signed body is not JSON');
  }
  const envelope = decoded(SandboxEnvelope, parsed);
  const occurred_at = envelope.created_at;
  switch (envelope.type) {
    case SANDBOX_EVENT_TYPES.paid: {
      const data = decoded(PaidData, envelope.data);
      return { id: envelope.id, kind: 'checkout_paid', ...pick(data, ['checkout_id', 'provider_checkout_id', 'provider_payment_id', 'amount', 'currency']), occurred_at };
    }
    case SANDBOX_EVENT_TYPES.failed: {
      const data = decoded(FailedData, envelope.data);
      return { id: envelope.id, kind: 'checkout_failed', ...pick(data, ['checkout_id', 'provider_checkout_id', 'failure_code', 'failure_message', 'amount', 'currency']), occurred_at };
    }
    default:
      return { id: envelope.id, kind: 'other', type: envelope.type, occurred_at };
  }
}

/** Only the named fields: a webhook's extra fields never reach the platform's events. */
function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((key) => [key, value[key]])) as Pick<T, K>;
}

// ------------------------------------------------------------------- the sandbox's own store

interface CheckoutDocument {
  id: string;
  checkout_id: string;
  tenant_id: string;
  plan: { id: string; code: string; name: string };
  interval: CheckoutRequest['interval'];
  amount: number;
  currency: string;
  customer_email: string | null;
  success_url: string;
  cancel_url: string;
  webhook_url: string;
  url: string;
  created_at: string;
  expires_at: string;
  /** The refusal of the latest declined attempt; cleared by nothing (a payment supersedes it). */
  last_failure: { failure_code: string; failure_message: string; failed_at: string } | null;
  [field: string]: unknown;
}

interface ChargeDocument {
  id: string;
  provider_checkout_id: string;
  /** The checkout a successful charge paid; unique, so a checkout is paid once. Null for a refusal. */
  paid_checkout: string | null;
  outcome: 'succeeded' | 'failed';
  failure_code: string | null;
  amount: number;
  currency: string;
  card_last4: string;
  event_id: string;
  created_at: string;
  webhook: WebhookDelivery | null;
  [field: string]: unknown;
}

export interface WebhookDelivery {
  delivered: boolean;
  attempts: number;
  /** The HTTP status of the last attempt; null when it got no answer. */
  last_status: number | null;
}

export interface SandboxDeliveryOptions {
  /** Attempts in all, the first included (default 4). */
  attempts?: number;
  /** The pause before attempt n + 1 (default 200 ms, 600 ms, 1800 ms, ...). */
  backoffMs?: (attempt: number) => number;
  /** How long one attempt may take (default 5 s). */
  timeoutMs?: number;
}

export interface SandboxPaymentProviderOptions {
  readStore: ReadStore;
  clock: Clock;
  logger?: Logger;
  /** Signs the webhooks; from BILLING_SANDBOX_WEBHOOK_SECRET or deriveSandboxWebhookSecret. Never logged. */
  webhookSecret: string;
  /** PUBLIC_URL: the base of the checkout page's URL; null takes the request's `platform_url`. */
  publicUrl: string | null;
  /** How long a checkout can be paid (default 24 h, as Stripe's). */
  checkoutTtlSeconds?: number;
  delivery?: SandboxDeliveryOptions;
}

const DEFAULT_CHECKOUT_TTL_SECONDS = 24 * 3600;

const randomId = (prefix: string): string => `${prefix}${randomBytes(12).toString('hex')}`;

/** Only http(s) URLs: anything else could not be a page to send a person to, nor a webhook receiver. */
function httpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Stripe's placeholder in a success URL, filled in the same way here. */
const successUrlOf = (checkout: CheckoutDocument): string => checkout.success_url.split('{CHECKOUT_SESSION_ID}').join(checkout.id);

export class SandboxPaymentProvider implements PaymentProvider, SandboxCheckoutPages {
  readonly name = SANDBOX_PROVIDER_NAME;
  readonly testCards: readonly SandboxTestCardDescription[] = SANDBOX_TEST_CARDS.map((card) => ({ number: spacedCardNumber(card.number), description: card.description }));
  private ready: Promise<void> | null = null;
  private readonly logger: Logger;
  private readonly delivery: Required<SandboxDeliveryOptions>;
  private readonly closing = new AbortController();

  constructor(private readonly options: SandboxPaymentProviderOptions) {
    this.logger = options.logger ?? silentLogger;
    this.delivery = {
      attempts: options.delivery?.attempts ?? 4,
      backoffMs: options.delivery?.backoffMs ?? ((attempt) => 200 * 3 ** (attempt - 1)),
      timeoutMs: options.delivery?.timeoutMs ?? 5000,
    };
  }

  private async store(): Promise<{ checkouts: Collection<CheckoutDocument>; charges: Collection<ChargeDocument> }> {
    this.ready ??= Promise.all([
      this.options.readStore.ensureCollection({ name: SANDBOX_CHECKOUTS, indexes: [{ field: 'checkout_id' }] }),
      this.options.readStore.ensureCollection({ name: SANDBOX_CHARGES, indexes: [{ field: 'paid_checkout', unique: true }, { field: 'provider_checkout_id' }] }),
    ]).then(() => undefined);
    await this.ready;
    return { checkouts: this.options.readStore.collection<CheckoutDocument>(SANDBOX_CHECKOUTS), charges: this.options.readStore.collection<ChargeDocument>(SANDBOX_CHARGES) };
  }

  /** Stops waiting between webhook retries (the platform is shutting down). */
  close(): void {
    this.closing.abort();
  }

  // ------------------------------------------------------------------------- PaymentProvider

  async createCheckout(request: CheckoutRequest): Promise<ProviderCheckout> {
    this.check(request);
    const { checkouts } = await this.store();
    // Derived from our checkout id, so a retried call finds the checkout it opened; keyed, so
    // nobody can work out a checkout page's address from a checkout id.
    const id = `cs_sandbox_${createHmac('sha256', this.options.webhookSecret).update(`checkout:${request.checkout_id}`).digest('hex').slice(0, 32)}`;
    const existing = await checkouts.get(id);
    if (existing) {
      const sameTerms = existing.amount === request.amount && existing.currency === request.currency.toLowerCase() && existing.plan.id === request.plan.id && existing.interval === request.interval;
      if (!sameTerms) {
        throw new PaymentProviderError(this.name, `checkout ${request.checkout_id} was opened before for another plan, interval or amount`);
      }
      return { provider_checkout_id: existing.id, url: existing.url, expires_at: existing.expires_at };
    }
    const now = this.options.clock.now();
    const base = (this.options.publicUrl ?? request.platform_url ?? '').replace(/\/+$/, '');
    const document: CheckoutDocument = {
      id,
      checkout_id: request.checkout_id,
      tenant_id: request.tenant_id,
      plan: { id: request.plan.id, code: request.plan.code, name: request.plan.name },
      interval: request.interval,
      amount: request.amount,
      currency: request.currency.toLowerCase(),
      customer_email: request.customer_email,
      success_url: request.success_url,
      cancel_url: request.cancel_url,
      webhook_url: request.webhook_url,
      // Without PUBLIC_URL nor the request's base, a path: the payer's browser resolves it against the origin it is on.
      url: `${base}${SANDBOX_CHECKOUT_PATH}/${id}`,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + (this.options.checkoutTtlSeconds ?? DEFAULT_CHECKOUT_TTL_SECONDS) * 1000).toISOString(),
      last_failure: null,
    };
    await checkouts.put(document);
    return { provider_checkout_id: id, url: document.url, expires_at: document.expires_at };
  }

  /** What a real provider refuses: answered as PaymentProviderError, like Stripe's refusals. */
  private check(request: CheckoutRequest): void {
    const problems = [
      ...(['success_url', 'cancel_url', 'webhook_url'] as const).filter((field) => !httpUrl(request[field])).map((field) => `${field}: expected an http or https URL`),
      ...(request.platform_url !== undefined && !httpUrl(request.platform_url) ? ['platform_url: expected an http or https URL'] : []),
      ...(Number.isSafeInteger(request.amount) && request.amount > 0 ? [] : ['amount: expected a positive integer of minor units']),
      ...(/^[a-z]{3}$/i.test(request.currency) ? [] : ['currency: expected a three-letter ISO 4217 code']),
    ];
    if (problems.length > 0) throw new PaymentProviderError(this.name, `the sandbox refused the checkout: ${problems.join('; ')}`);
  }

  parseWebhook(rawBody: Buffer, headers: Readonly<Record<string, string | string[] | undefined>>): ProviderEvent {
    const header = signatureHeader(headers, SANDBOX_SIGNATURE_HEADER);
    verifySandboxSignature(this.options.webhookSecret, rawBody, header, Math.floor(this.options.clock.now().getTime() / 1000));
    return eventOf(rawBody);
  }

  async retrieveCheckout(providerCheckoutId: string): Promise<ProviderCheckoutStatus> {
    const { checkouts, charges } = await this.store();
    const checkout = await checkouts.get(providerCheckoutId);
    if (!checkout) throw new ProviderCheckoutNotFoundError(providerCheckoutId);
    const charge = await this.successfulCharge(charges, providerCheckoutId);
    if (charge) return { status: 'paid', provider_payment_id: charge.id, amount: charge.amount, currency: charge.currency, paid_at: charge.created_at };
    if (this.expired(checkout)) return { status: 'expired' };
    if (checkout.last_failure) return { status: 'failed', failure_code: checkout.last_failure.failure_code, failure_message: checkout.last_failure.failure_message };
    return { status: 'open' };
  }

  /** The one successful charge of a checkout: the unique index is the record that it is paid. */
  private async successfulCharge(charges: Collection<ChargeDocument>, providerCheckoutId: string): Promise<ChargeDocument | null> {
    const page = await charges.find({ where: { paid_checkout: providerCheckoutId }, limit: 1 });
    return page.items[0] ?? null;
  }

  private expired(checkout: CheckoutDocument): boolean {
    return this.options.clock.now().toISOString() >= checkout.expires_at;
  }

  // ------------------------------------------------------------------ the hosted checkout page

  async view(providerCheckoutId: string): Promise<SandboxCheckoutView | null> {
    const { checkouts, charges } = await this.store();
    const checkout = await checkouts.get(providerCheckoutId);
    if (!checkout) return null;
    const paid = (await this.successfulCharge(charges, providerCheckoutId)) !== null;
    return {
      provider_checkout_id: checkout.id,
      plan_name: checkout.plan.name,
      interval: checkout.interval,
      amount: checkout.amount,
      currency: checkout.currency,
      customer_email: checkout.customer_email,
      success_url: successUrlOf(checkout),
      cancel_url: checkout.cancel_url,
      status: paid ? 'paid' : this.expired(checkout) ? 'expired' : 'open',
      last_failure: paid || !checkout.last_failure ? null : { failure_code: checkout.last_failure.failure_code, failure_message: checkout.last_failure.failure_message },
      expires_at: checkout.expires_at,
    };
  }

  async pay(providerCheckoutId: string, card: CardEntry): Promise<SandboxPaymentOutcome> {
    const { checkouts, charges } = await this.store();
    const checkout = await checkouts.get(providerCheckoutId);
    if (!checkout) return { outcome: 'not_found' };
    if (await this.successfulCharge(charges, providerCheckoutId)) return { outcome: 'already_paid', success_url: successUrlOf(checkout) };
    if (this.expired(checkout)) return { outcome: 'expired' };
    const now = this.options.clock.now();
    const problems = cardProblems(card, now);
    if (problems.length > 0) return { outcome: 'invalid', problems };
    const digits = card.card_number.replace(/[\s-]/g, '');
    const testCard = TEST_CARDS.get(digits)!;
    const charge: ChargeDocument = {
      id: randomId('py_sandbox_'),
      provider_checkout_id: checkout.id,
      paid_checkout: testCard.outcome === 'paid' ? checkout.id : null,
      outcome: testCard.outcome === 'paid' ? 'succeeded' : 'failed',
      failure_code: testCard.outcome === 'declined' ? testCard.failure_code : null,
      amount: checkout.amount,
      currency: checkout.currency,
      card_last4: digits.slice(-4),
      // One event per attempt; its redeliveries carry the same id.
      event_id: randomId('evt_sandbox_'),
      created_at: now.toISOString(),
      webhook: null,
    };
    try {
      await charges.put(charge);
    } catch (error) {
      // Another payment of this checkout got in first (a second tab, another process).
      if (error instanceof UniqueConstraintError && error.field === 'paid_checkout') return { outcome: 'already_paid', success_url: successUrlOf(checkout) };
      throw error;
    }
    const common = { provider_checkout_id: checkout.id, checkout_id: checkout.checkout_id, tenant_id: checkout.tenant_id, amount: checkout.amount, currency: checkout.currency };
    if (testCard.outcome === 'paid') {
      const event: SandboxEvent = { id: charge.event_id, type: SANDBOX_EVENT_TYPES.paid, created_at: charge.created_at, data: { ...common, provider_payment_id: charge.id } };
      const delivery = await this.send(checkout, event);
      await charges.patch(charge.id, { webhook: delivery });
      return { outcome: 'paid', redirect_to: successUrlOf(checkout), webhook_delivered: delivery.delivered };
    }
    const failure = { failure_code: testCard.failure_code, failure_message: testCard.failure_message };
    await checkouts.patch(checkout.id, { last_failure: { ...failure, failed_at: charge.created_at } });
    const event: SandboxEvent = { id: charge.event_id, type: SANDBOX_EVENT_TYPES.failed, created_at: charge.created_at, data: { ...common, ...failure } };
    const delivery = await this.send(checkout, event);
    await charges.patch(charge.id, { webhook: delivery });
    return { outcome: 'declined', ...failure, webhook_delivered: delivery.delivered };
  }

  /**
   * POSTs the event to the checkout's webhook URL, signed anew for each attempt (as Stripe
   * does), until a 2xx answer or the last attempt. Every attempt sends the same bytes and
   * the same event id, so the platform applies it once however often it arrives.
   */
  private async send(checkout: CheckoutDocument, event: SandboxEvent): Promise<WebhookDelivery> {
    const body = Buffer.from(JSON.stringify(event), 'utf8');
    let lastStatus: number | null = null;
    let attempt = 0;
    while (attempt < this.delivery.attempts && !this.closing.signal.aborted) {
      if (attempt > 0) await pause(this.delivery.backoffMs(attempt), this.closing.signal);
      attempt += 1;
      const signature = signSandboxWebhook(this.options.webhookSecret, body, Math.floor(this.options.clock.now().getTime() / 1000));
      try {
        const response = await fetch(checkout.webhook_url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'svc-sandbox-payments/1', [SANDBOX_SIGNATURE_HEADER]: signature },
          body,
          redirect: 'manual',
          signal: AbortSignal.any([AbortSignal.timeout(this.delivery.timeoutMs), this.closing.signal]),
        });
        lastStatus = response.status;
        await response.arrayBuffer().catch(() => undefined);
        if (response.ok) return { delivered: true, attempts: attempt, last_status: lastStatus };
      } catch {
        lastStatus = null;
      }
    }
    this.logger.warn(
      { event_id: event.id, event_type: event.type, provider_checkout_id: checkout.id, attempts: attempt, last_status: lastStatus },
      'the sandbox could not deliver a webhook; the platform still finds the outcome through retrieveCheckout (POST /billing/confirm)',
    );
    return { delivered: false, attempts: attempt, last_status: lastStatus };
  }
}

// --------------------------------------------------------------------------------- the card

const NOT_A_TEST_CARD = `This is not a sandbox test card: use ${SANDBOX_TEST_CARDS.map((card) => spacedCardNumber(card.number)).join(', ')} (see the test cards below).`;

/** What is wrong with the card as typed, field by field; nothing is charged while anything is. */
export function cardProblems(card: CardEntry, now: Date): Array<{ field: CardField; message: string }> {
  const problems: Array<{ field: CardField; message: string }> = [];
  const digits = card.card_number.replace(/[\s-]/g, '');
  if (digits === '') problems.push({ field: 'card_number', message: 'Enter a card number.' });
  else if (!TEST_CARDS.has(digits)) problems.push({ field: 'card_number', message: NOT_A_TEST_CARD });
  const expiry = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(card.expiry);
  const month = expiry ? Number(expiry[1]) : 0;
  const year = expiry ? (expiry[2].length === 2 ? 2000 + Number(expiry[2]) : Number(expiry[2])) : 0;
  if (!expiry || month < 1 || month > 12) problems.push({ field: 'expiry', message: 'Enter the expiry date as MM/YY.' });
  else if (year * 12 + month < now.getUTCFullYear() * 12 + now.getUTCMonth() + 1) problems.push({ field: 'expiry', message: 'The card has expired: use a month that has not passed.' });
  if (!/^\s*\d{3,4}\s*$/.test(card.cvc)) problems.push({ field: 'cvc', message: 'Enter the 3 or 4 digit security code.' });
  return problems;
}
