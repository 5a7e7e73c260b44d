// Payments: recording what a provider reports of a payment attempt, once, and the payment
// history (the tenant's, and the super admin's across tenants), newest first.
//
// A payment is recorded once whoever reports it first: the payment of a paid checkout is named
// after the checkout (`paidCheckoutPaymentId`), so a webhook delivered twenty times and a
// confirm racing it all write the same stream, and the payment aggregate records one
// PaymentSucceeded. A failed attempt is named after the provider's event (a checkout may fail
// several times, each attempt its own event).

import { type PaymentCommand, type PaymentEvent, type PaymentFactsData, type PaymentState, paymentDecider, paymentEvents, paymentStream } from '../../domain/payment/payment';
import { PAYMENTS, type PaymentDocument } from '../../projections/payments';
import { type Aggregate, type CommandDependencies, type CommandResult, handleCommand } from '../command-handling/handle-command';
import type { IdGenerator } from '../ports/clock';
import type { Page, Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

export const paymentAggregate: Aggregate<PaymentCommand, PaymentEvent, PaymentState> = { decider: paymentDecider, events: paymentEvents };

export const PAYMENT_STATUSES = ['succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** The one payment a paid checkout has: derived from the checkout's id. */
export const paidCheckoutPaymentId = (ids: Pick<IdGenerator, 'fromKey'>, checkoutId: string): string => ids.fromKey(`payment:checkout:${checkoutId}`);

/** A failed attempt's payment: derived from the provider's event that reported it. */
export const failedAttemptPaymentId = (ids: Pick<IdGenerator, 'fromKey'>, provider: string, providerEventId: string): string =>
  ids.fromKey(`payment:failed:${provider}:${providerEventId}`);

/** Records a successful payment of a checkout; the same report again records nothing. */
export function recordPaymentSucceeded(
  deps: CommandDependencies,
  facts: Omit<PaymentFactsData, 'payment_id'> & { provider_payment_id: string; paid_at: string },
  context: RequestContext,
): Promise<CommandResult<PaymentEvent>> {
  const payment_id = paidCheckoutPaymentId(deps.ids, facts.checkout_id);
  return handleCommand(deps, paymentAggregate, paymentStream(payment_id), { type: 'RecordPaymentSucceeded', data: { ...facts, payment_id } }, { ...context, tenant_id: facts.tenant_id });
}

/** Records a refused payment attempt reported by the provider's event `providerEventId`. */
export function recordPaymentFailed(
  deps: CommandDependencies,
  providerEventId: string,
  facts: Omit<PaymentFactsData, 'payment_id'> & { failure_code: string; failure_message: string; failed_at: string },
  context: RequestContext,
): Promise<CommandResult<PaymentEvent>> {
  const payment_id = failedAttemptPaymentId(deps.ids, facts.provider, providerEventId);
  return handleCommand(deps, paymentAggregate, paymentStream(payment_id), { type: 'RecordPaymentFailed', data: { ...facts, payment_id } }, { ...context, tenant_id: facts.tenant_id });
}

/** A payment as the payment history shows it. */
export interface PaymentView {
  id: string;
  tenant_id: string;
  checkout_id: string;
  plan_id: string;
  interval: 'month' | 'year';
  amount: number;
  currency: string;
  provider: string;
  status: PaymentStatus;
  provider_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** When it was paid, or refused. */
  occurred_at: string;
}

const paymentView = (payment: PaymentDocument): PaymentView => ({
  id: payment.id,
  tenant_id: payment.tenant_id,
  checkout_id: payment.checkout_id,
  plan_id: payment.plan_id,
  interval: payment.interval,
  amount: payment.amount,
  currency: payment.currency,
  provider: payment.provider,
  status: payment.status,
  provider_payment_id: payment.provider_payment_id,
  failure_code: payment.failure_code,
  failure_message: payment.failure_message,
  occurred_at: payment.occurred_at,
});

export interface PaymentFilter {
  tenant_id?: string;
  status?: PaymentStatus;
}

/** Payments, successes and failures, newest first, one page at a time. */
export async function listPayments(deps: ReadModelDependencies, filter: PaymentFilter, page: { limit?: number; cursor?: string }): Promise<Page<PaymentView>> {
  const where: Where = {};
  if (filter.tenant_id !== undefined) where.tenant_id = filter.tenant_id;
  if (filter.status !== undefined) where.status = filter.status;
  const found = await deps.readStore.collection<PaymentDocument>(PAYMENTS).find({ where, sort: { field: 'occurred_at', direction: 'desc' }, ...page });
  return { items: found.items.map(paymentView), next_cursor: found.next_cursor };
}

/** The tenant's payment history (GET /billing/payments). */
export function paymentHistory(deps: ReadModelDependencies, tenantId: string, page: { limit?: number; cursor?: string }): Promise<Page<PaymentView>> {
  return listPayments(deps, { tenant_id: tenantId }, page);
}
