// Saga `handoff_delivery` (version 1): when a conversation is handed off to a person
// (`ConversationStatusChanged` to `handed_off`) in an organization whose handoff webhook is
// configured and on, and whose plan includes handoff, it posts the conversation to that
// webhook, signed as connector requests are (spec 5.2), and keeps every attempt, failure,
// scheduled retry and the final give-up as events of the handoff (domain/handoff), the
// pattern of application/mail/mail-delivery.ts.
//
// `handoffDelivery` is the process manager (pure): given the handoff's events and an input,
// the next step. The saga runs it: the trigger arrives through the saga subscription and
// opens the handoff (its id is the trigger's id, so a redelivered trigger opens nothing new);
// retries come from a scan of the `handoff_deliveries` read model for what is due (`runDue`),
// never from infrastructure redelivery, which is left for crashes. A webhook that answers
// anything but 2xx, or not at all within the time limit, is an outcome, recorded, not thrown.
//
// Every attempt uses the configuration as it is then: a corrected URL or a rotated secret
// applies to the retries; handoffs turned off meanwhile give the handoff up. The body is the
// same on every attempt (the conversation up to the hand-off), and so is `x-svc-delivery-id`:
// the receiver's idempotency key.

import { type HandoffCommand, type HandoffEvent, type HandoffRequestedData, type HandoffState, handoffDecider, handoffEvents, handoffStream } from '../../domain/handoff/handoff';
import { handoffConfigStream } from '../../domain/handoff-config/handoff-config';
import { HANDOFF_DELIVERIES, type HandoffDeliveryDocument } from '../../projections/handoff-deliveries';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { entitlementsOf } from '../entitlement/entitlements';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { OutboundHttp } from '../ports/outbound-http';
import type { ReadModelDependencies } from '../shared/read-models';
import type { Where } from '../ports/read-store';
import type { ProcessManager } from '../sagas/process-manager';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { enabledHandoffConfig, handoffConfigAggregate } from './handoff-config';
import { handoffPayload } from './handoff-payload';
import { messageOf } from '../../domain/shared/errors';

export const HANDOFF_DELIVERY = 'handoff_delivery';

/** The header that carries the handoff's id on every attempt: the receiver's idempotency key. */
export const DELIVERY_ID_HEADER = 'x-svc-delivery-id';
/** The kind of payload, for receivers that take several on one URL. */
export const EVENT_HEADER = 'x-svc-event';
export const HANDOFF_EVENT = 'conversation.handed_off';

export const handoffAggregate: Aggregate<HandoffCommand, HandoffEvent, HandoffState> = { decider: handoffDecider, events: handoffEvents };

export interface HandoffDeliveryPolicy {
  /** Attempts before the handoff is given up (HANDOFF_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Delay after failed attempt n before attempt n+1, in ms. */
  backoffMs(attempt: number): number;
  /** How long one POST may take (HANDOFF_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * How long an attempt, or a requested handoff no delivery picked up, may go without an
   * outcome before it is taken as lost (the process stopped mid-post). Longer than a POST can take.
   */
  outcomeTimeoutMs: number;
}

export type HandoffDeliveryInput =
  | { type: 'HandoffRequested'; data: { handoff_id: string } }
  /** The due scan found the handoff waiting: a scheduled retry, or an attempt with no outcome. */
  | { type: 'HandoffDeliveryDue'; data: { handoff_id: string } }
  | { type: 'WebhookAccepted'; data: { handoff_id: string; attempt: number; status_code: number } }
  | { type: 'WebhookFailed'; data: { handoff_id: string; attempt: number; status_code: number | null; error: string } }
  /** Before attempt `attempts + 1`: the tenant turned handoffs off, or the conversation is not there. */
  | { type: 'HandoffWithdrawn'; data: { handoff_id: string; attempts: number; error: string } };

export type HandoffDeliveryOutput =
  /** Claim the attempt (StartHandoffAttempt), then POST; the answer comes back as an input. */
  | { type: 'PostHandoff'; data: { handoff_id: string; attempt: number } }
  | Extract<HandoffCommand, { type: 'RecordHandoffDelivered' | 'RecordHandoffFailure' | 'AbandonHandoff' }>;

export function handoffDelivery(policy: Pick<HandoffDeliveryPolicy, 'maxAttempts' | 'backoffMs' | 'outcomeTimeoutMs'>): ProcessManager<HandoffDeliveryInput, HandoffEvent, HandoffState, HandoffDeliveryOutput> {
  const afterFailure = (attempt: number, status_code: number | null, error: string, now: Date): HandoffDeliveryOutput[] =>
    attempt >= policy.maxAttempts
      ? [{ type: 'AbandonHandoff', data: { attempt, status_code, error, reason: 'attempts_exhausted' } }]
      : [{ type: 'RecordHandoffFailure', data: { attempt, status_code, error, next_attempt_at: new Date(now.getTime() + policy.backoffMs(attempt)).toISOString() } }];
  const overdue = (since: string, now: Date): boolean => Date.parse(since) + policy.outcomeTimeoutMs <= now.getTime();

  return {
    initialState: handoffDecider.initialState,
    evolve: handoffDecider.evolve,
    decide(input, state, { now }) {
      if (state.status === 'absent') return [];
      const post = (attempt: number): HandoffDeliveryOutput[] => [{ type: 'PostHandoff', data: { handoff_id: state.request.handoff_id, attempt } }];
      switch (input.type) {
        case 'HandoffRequested':
          // Posted, being posted, or waiting for its retry: a redelivered trigger asks for nothing.
          return state.status === 'requested' ? post(1) : [];
        case 'HandoffDeliveryDue':
          switch (state.status) {
            case 'requested':
              return overdue(state.request.requested_at, now) ? post(1) : [];
            case 'retrying':
              return Date.parse(state.next_attempt_at) <= now.getTime() ? post(state.attempts + 1) : [];
            case 'sending':
              return overdue(state.started_at, now) ? afterFailure(state.attempts, null, `no outcome recorded within ${policy.outcomeTimeoutMs} ms of the attempt's start`, now) : [];
            default:
              return [];
          }
        case 'WebhookAccepted':
          return state.status === 'delivered' ? [] : [{ type: 'RecordHandoffDelivered', data: { attempt: input.data.attempt, status_code: input.data.status_code } }];
        case 'WebhookFailed':
          return state.status === 'sending' && state.attempts === input.data.attempt ? afterFailure(input.data.attempt, input.data.status_code, input.data.error, now) : [];
        case 'HandoffWithdrawn':
          return (state.status === 'requested' || state.status === 'retrying') && state.attempts === input.data.attempts
            ? [{ type: 'AbandonHandoff', data: { attempt: input.data.attempts, status_code: null, error: input.data.error, reason: 'withdrawn' } }]
            : [];
      }
    },
  };
}

export interface HandoffDeliveryDependencies extends CommandDependencies, ReadModelDependencies {
  secrets: Secrets;
  outbound: OutboundHttp;
}

/** Handoffs one due pass looks at per kind; the next pass takes the rest. */
const DUE_PAGE = 100;

export function handoffDeliverySaga(deps: HandoffDeliveryDependencies, policy: HandoffDeliveryPolicy & { concurrency: number }): Saga<'ConversationStatusChanged'> {
  const process = handoffDelivery(policy);

  /** Feeds one input to the process manager over the handoff's current state, and carries out what it decides. */
  async function run(handoffId: string, input: HandoffDeliveryInput, causationId: string | null): Promise<void> {
    const stream = handoffStream(handoffId);
    const [first] = await deps.eventStore.readStream(stream, { maxCount: 1 });
    if (!first) return;
    if (first.type !== 'HandoffRequested') throw new Error(`${stream}@0: expected HandoffRequested, found ${first.type}`);
    const context = { ...systemContext(first.metadata.correlation_id, HANDOFF_DELIVERY, causationId ?? first.id), tenant_id: first.data.tenant_id };
    const { state } = await loadAggregate(deps, handoffAggregate, stream);
    for (const output of process.decide(input, state, { now: deps.clock.now() })) {
      if (output.type === 'PostHandoff') await post(first.data, output.data.attempt, context);
      else await handleCommand(deps, handoffAggregate, stream, output, context);
    }
  }

  async function post(request: HandoffRequestedData, attempt: number, context: RequestContext): Promise<void> {
    const { handoff_id } = request;
    const withdraw = (error: string): Promise<void> => run(handoff_id, { type: 'HandoffWithdrawn', data: { handoff_id, attempts: attempt - 1, error } }, context.causation_id);
    const config = await enabledHandoffConfig(deps, request.tenant_id);
    if (!config) return withdraw('handoffs are turned off for this organization');
    const payload = await handoffPayload(deps, request);
    if (!payload) return withdraw('the conversation is not there');
    // The claim. No idempotency key on purpose: the append is checked against the revision
    // just read, so when two deliveries race for this attempt the loser re-reads, finds it
    // started, and appends nothing.
    const claimed = await handleCommand(deps, handoffAggregate, handoffStream(handoff_id), { type: 'StartHandoffAttempt', data: { attempt, url: config.url } }, context);
    if (claimed.events.length === 0) return;
    let outcome: HandoffDeliveryInput;
    try {
      const answer = await deps.outbound.postSigned({
        url: config.url,
        secret: config.secret,
        body: JSON.stringify(payload),
        timestampSeconds: Math.floor(deps.clock.now().getTime() / 1000),
        headers: { [DELIVERY_ID_HEADER]: handoff_id, [EVENT_HEADER]: HANDOFF_EVENT, 'user-agent': 'svc-platform-handoff/1' },
        timeoutMs: policy.timeoutMs,
      });
      outcome =
        answer.status >= 200 && answer.status < 300
          ? { type: 'WebhookAccepted', data: { handoff_id, attempt, status_code: answer.status } }
          : { type: 'WebhookFailed', data: { handoff_id, attempt, status_code: answer.status, error: `the webhook answered HTTP ${answer.status}` } };
    } catch (error) {
      outcome = { type: 'WebhookFailed', data: { handoff_id, attempt, status_code: null, error: messageOf(error) } };
    }
    await run(handoff_id, outcome, context.causation_id);
  }

  /** Whether a handoff of this tenant's conversations is to be sent: configured, on, and in the plan. */
  async function handoffWanted(tenantId: string): Promise<{ url: string } | null> {
    const { state } = await loadAggregate(deps, handoffConfigAggregate, handoffConfigStream(tenantId));
    if (state.status !== 'configured' || !state.enabled) return null;
    const { features } = await entitlementsOf(deps, tenantId);
    return features.handoff ? { url: state.url } : null;
  }

  /** Handoffs the read model shows as due; the process manager checks each against its stream. */
  async function due(now: Date): Promise<HandoffDeliveryDocument[]> {
    const lostBefore = new Date(now.getTime() - policy.outcomeTimeoutMs).toISOString();
    const queries: Array<{ where: Where; field: string }> = [
      { where: { status: 'retrying', next_attempt_at: { lte: now.toISOString() } }, field: 'next_attempt_at' },
      { where: { status: 'sending', last_attempt_at: { lte: lostBefore } }, field: 'last_attempt_at' },
      { where: { status: 'requested', requested_at: { lte: lostBefore } }, field: 'requested_at' },
    ];
    const deliveries = deps.readStore.collection<HandoffDeliveryDocument>(HANDOFF_DELIVERIES);
    const pages = await Promise.all(queries.map(({ where, field }) => deliveries.find({ where, sort: { field, direction: 'asc' }, limit: DUE_PAGE })));
    return pages.flatMap((page) => page.items);
  }

  return {
    name: HANDOFF_DELIVERY,
    version: 1,
    filter: { kind: 'event_type', types: ['ConversationStatusChanged'] },
    async handle(event) {
      if (event.data.status !== 'handed_off') return;
      const tenantId = event.data.tenant_id;
      const wanted = await handoffWanted(tenantId);
      if (!wanted) return;
      const handoffId = event.id;
      const context = { ...systemContext(event.metadata.correlation_id, HANDOFF_DELIVERY, event.id), tenant_id: tenantId };
      await handleCommand(
        deps,
        handoffAggregate,
        handoffStream(handoffId),
        {
          type: 'RequestHandoff',
          data: {
            handoff_id: handoffId,
            tenant_id: tenantId,
            conversation_id: event.data.conversation_id,
            conversation_revision: event.revision,
            handed_off_by: { kind: event.metadata.actor.kind, id: event.metadata.actor.id },
            handed_off_at: event.data.changed_at,
            url: wanted.url,
          },
        },
        context,
        // A redelivered trigger finds its handoff requested and records nothing.
        { idempotencyKey: `${HANDOFF_DELIVERY}:${event.id}` },
      );
      await run(handoffId, { type: 'HandoffRequested', data: { handoff_id: handoffId } }, event.id);
    },
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now();
      await forEachConcurrently(await due(now), policy.concurrency, async (delivery) => {
        try {
          await run(delivery.id, { type: 'HandoffDeliveryDue', data: { handoff_id: delivery.id } }, null);
        } catch (error) {
          // Stays due: the next pass tries again.
          logger.error({ err: error, handoff_id: delivery.id }, 'due handoff delivery failed');
        }
      });
    },
  };
}
