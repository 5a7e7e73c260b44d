// Saga `whatsapp_replies` (version 1): sends each queued WhatsApp reply through the messaging
// port, and keeps every attempt, failure, scheduled retry and the final give-up as events of
// the reply (domain/whatsapp-reply), the pattern of application/handoff/handoff-delivery.ts.
//
// Which transport: the embedded outbox when the deployment says WHATSAPP_OUTBOX=true or the
// tenant has no access token (the reply is kept for the super admin to read:
// `WhatsAppReplyKept`); the WhatsApp Cloud API otherwise (`WhatsAppReplySent` with Meta's
// message id, which its status callbacks name). Every attempt uses the configuration as it is
// then: a token given meanwhile applies to the retries; a channel turned off, a number moved
// to another tenant, a tenant suspended or a plan without the feature give the reply up.
//
// `whatsappReplyDelivery` is the process manager (pure): given the reply's events and an
// input, the next step. The saga runs it: `WhatsAppReplyQueued` arrives through the saga
// subscription; retries come from a scan of the `whatsapp_replies` read model for what is due
// (`runDue`), never from infrastructure redelivery, which is left for crashes. A failure the
// Cloud API says a retry cannot change (a bad token, a recipient outside the 24-hour window)
// gives the reply up at once; others (no answer, 429, 5xx) are retried with back-off.

import { type WhatsAppReplyCommand, type WhatsAppReplyEvent, type WhatsAppReplyQueuedData, type WhatsAppReplyState, whatsappReplyDecider, whatsappReplyEvents, whatsappReplyStream } from '../../domain/whatsapp-reply/whatsapp-reply';
import { DomainError, messageOf } from '../../domain/shared/errors';
import { WHATSAPP_REPLIES, type WhatsAppReplyDocument } from '../../projections/whatsapp-replies';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import { MessagingError, type Messaging } from '../ports/messaging';
import type { Where } from '../ports/read-store';
import type { ProcessManager } from '../sagas/process-manager';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { type WhatsAppSettings, configurationOfTenant, whyNotServed } from './whatsapp-config';

export const WHATSAPP_REPLIES_SAGA = 'whatsapp_replies';

export const whatsappReplyAggregate: Aggregate<WhatsAppReplyCommand, WhatsAppReplyEvent, WhatsAppReplyState> = { decider: whatsappReplyDecider, events: whatsappReplyEvents };

export interface ReplyDeliveryPolicy {
  /** Attempts before the reply is given up (WHATSAPP_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Delay after failed attempt n before attempt n+1, in ms. */
  backoffMs(attempt: number): number;
  /**
   * How long an attempt, or a queued reply no delivery picked up, may go without an outcome
   * before it is taken as lost (the process stopped mid-send). Longer than a send can take.
   */
  outcomeTimeoutMs: number;
}

export type ReplyDeliveryInput =
  | { type: 'WhatsAppReplyQueued'; data: { reply_id: string } }
  /** The due scan found the reply waiting: a scheduled retry, or an attempt with no outcome. */
  | { type: 'WhatsAppReplyDue'; data: { reply_id: string } }
  | { type: 'MessagingAccepted'; data: { reply_id: string; attempt: number; transport: string; provider_message_id: string | null; status_code: number } }
  | { type: 'MessagingKept'; data: { reply_id: string; attempt: number } }
  | { type: 'MessagingFailed'; data: { reply_id: string; attempt: number; status_code: number | null; error: string; permanent: boolean } }
  /** Before attempt `attempts + 1`: the channel was turned off, the number moved, or the tenant may no longer use it. */
  | { type: 'WhatsAppReplyWithdrawn'; data: { reply_id: string; attempts: number; error: string } };

export type ReplyDeliveryOutput =
  /** Claim the attempt (StartWhatsAppReplyAttempt), then send; the answer comes back as an input. */
  | { type: 'SendWhatsAppReply'; data: { reply_id: string; attempt: number } }
  | Extract<WhatsAppReplyCommand, { type: 'RecordWhatsAppReplySent' | 'RecordWhatsAppReplyKept' | 'RecordWhatsAppReplyFailure' | 'AbandonWhatsAppReply' }>;

export function whatsappReplyDelivery(policy: Pick<ReplyDeliveryPolicy, 'maxAttempts' | 'backoffMs' | 'outcomeTimeoutMs'>): ProcessManager<ReplyDeliveryInput, WhatsAppReplyEvent, WhatsAppReplyState, ReplyDeliveryOutput> {
  const afterFailure = (attempt: number, status_code: number | null, error: string, permanent: boolean, now: Date): ReplyDeliveryOutput[] =>
    permanent || attempt >= policy.maxAttempts
      ? [{ type: 'AbandonWhatsAppReply', data: { attempt, status_code, error } }]
      : [{ type: 'RecordWhatsAppReplyFailure', data: { attempt, status_code, error, next_attempt_at: new Date(now.getTime() + policy.backoffMs(attempt)).toISOString() } }];
  const overdue = (since: string, now: Date): boolean => Date.parse(since) + policy.outcomeTimeoutMs <= now.getTime();

  return {
    initialState: whatsappReplyDecider.initialState,
    evolve: whatsappReplyDecider.evolve,
    decide(input, state, { now }) {
      if (state.status === 'absent') return [];
      const send = (attempt: number): ReplyDeliveryOutput[] => [{ type: 'SendWhatsAppReply', data: { reply_id: state.reply.reply_id, attempt } }];
      switch (input.type) {
        case 'WhatsAppReplyQueued':
          // Sent, being sent, or waiting for its retry: a redelivered trigger asks for nothing.
          return state.status === 'queued' ? send(1) : [];
        case 'WhatsAppReplyDue':
          switch (state.status) {
            case 'queued':
              return overdue(state.reply.queued_at, now) ? send(1) : [];
            case 'retrying':
              return Date.parse(state.next_attempt_at) <= now.getTime() ? send(state.attempts + 1) : [];
            case 'sending':
              return overdue(state.started_at, now) ? afterFailure(state.attempts, null, `no outcome recorded within ${policy.outcomeTimeoutMs} ms of the attempt's start`, false, now) : [];
            default:
              return [];
          }
        case 'MessagingAccepted': {
          const { attempt, transport, provider_message_id, status_code } = input.data;
          return state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'RecordWhatsAppReplySent', data: { attempt, transport, provider_message_id, status_code } }];
        }
        case 'MessagingKept':
          return state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'RecordWhatsAppReplyKept', data: { attempt: input.data.attempt } }];
        case 'MessagingFailed':
          return state.status === 'sending' && state.attempts === input.data.attempt ? afterFailure(input.data.attempt, input.data.status_code, input.data.error, input.data.permanent, now) : [];
        case 'WhatsAppReplyWithdrawn':
          return (state.status === 'queued' || state.status === 'retrying') && state.attempts === input.data.attempts
            ? [{ type: 'AbandonWhatsAppReply', data: { attempt: input.data.attempts, status_code: null, error: input.data.error } }]
            : [];
      }
    },
  };
}

/** The transports a reply can go through; which one is the rule of `transportFor`. */
export interface ReplyTransports {
  cloudApi: Messaging;
  outbox: Messaging;
}

export interface ReplyDeliveryDependencies extends CommandDependencies, ReadModelDependencies {
  secrets: Pick<Secrets, 'open'>;
  transports: ReplyTransports;
  whatsapp: WhatsAppSettings;
}

/** The outbox with WHATSAPP_OUTBOX=true or without an access token; the Cloud API otherwise. */
export const transportFor = (transports: ReplyTransports, settings: WhatsAppSettings, accessTokenSealed: string | null): Messaging =>
  settings.outboxOnly || accessTokenSealed === null ? transports.outbox : transports.cloudApi;

/** Queues a reply; its id is the caller's (derived from what caused it), so queueing it again queues nothing. */
export async function queueWhatsAppReply(deps: CommandDependencies, reply: Omit<WhatsAppReplyQueuedData, 'queued_at'>, context: RequestContext): Promise<void> {
  try {
    await handleCommand(deps, whatsappReplyAggregate, whatsappReplyStream(reply.reply_id), { type: 'QueueWhatsAppReply', data: reply }, context);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'whatsapp_reply_exists') return;
    throw error;
  }
}

/** Replies one due pass looks at per kind; the next pass takes the rest. */
const DUE_PAGE = 100;

export function whatsappReplyDeliverySaga(deps: ReplyDeliveryDependencies, policy: ReplyDeliveryPolicy & { concurrency: number }): Saga<'WhatsAppReplyQueued'> {
  const process = whatsappReplyDelivery(policy);

  /** Feeds one input to the process manager over the reply's current state, and carries out what it decides. */
  async function run(replyId: string, input: ReplyDeliveryInput, causationId: string | null): Promise<void> {
    const stream = whatsappReplyStream(replyId);
    const [first] = await deps.eventStore.readStream(stream, { maxCount: 1 });
    if (!first) return;
    if (first.type !== 'WhatsAppReplyQueued') throw new Error(`${stream}@0: expected WhatsAppReplyQueued, found ${first.type}`);
    const context = { ...systemContext(first.metadata.correlation_id, WHATSAPP_REPLIES_SAGA, causationId ?? first.id), tenant_id: first.data.tenant_id };
    const { state } = await loadAggregate(deps, whatsappReplyAggregate, stream);
    for (const output of process.decide(input, state, { now: deps.clock.now() })) {
      if (output.type === 'SendWhatsAppReply') await send(first.data, output.data.attempt, context);
      else await handleCommand(deps, whatsappReplyAggregate, stream, output, context);
    }
  }

  async function send(reply: WhatsAppReplyQueuedData, attempt: number, context: RequestContext): Promise<void> {
    const { reply_id, tenant_id } = reply;
    const withdraw = (error: string): Promise<void> => run(reply_id, { type: 'WhatsAppReplyWithdrawn', data: { reply_id, attempts: attempt - 1, error } }, context.causation_id);
    const configuration = await configurationOfTenant(deps, tenant_id);
    if (configuration === null || configuration.phone_number_id !== reply.phone_number_id) return withdraw('the business number is no longer this organization’s WhatsApp number');
    const refusal = await whyNotServed(deps, tenant_id, configuration.enabled);
    if (refusal !== null) return withdraw(`the organization may not send WhatsApp messages now (${refusal})`);
    // The claim. No idempotency key on purpose: the append is checked against the revision
    // just read, so when two deliveries race for this attempt the loser re-reads, finds it
    // started, and appends nothing.
    const claimed = await handleCommand(deps, whatsappReplyAggregate, whatsappReplyStream(reply_id), { type: 'StartWhatsAppReplyAttempt', data: { attempt } }, context);
    if (claimed.events.length === 0) return;
    const transport = transportFor(deps.transports, deps.whatsapp, configuration.access_token_sealed);
    const accessToken = configuration.access_token_sealed === null ? null : deps.secrets.open(configuration.access_token_sealed);
    let outcome: ReplyDeliveryInput;
    try {
      const receipt = await transport.sendText({
        from: { phone_number_id: configuration.phone_number_id, access_token: accessToken, api_version: configuration.graph_api_version },
        to: reply.to,
        text: reply.text,
      });
      outcome =
        receipt.outcome === 'kept'
          ? { type: 'MessagingKept', data: { reply_id, attempt } }
          : { type: 'MessagingAccepted', data: { reply_id, attempt, transport: receipt.transport, provider_message_id: receipt.provider_message_id, status_code: receipt.status_code } };
    } catch (error) {
      outcome =
        error instanceof MessagingError
          ? { type: 'MessagingFailed', data: { reply_id, attempt, status_code: error.statusCode, error: error.message, permanent: error.permanent } }
          : { type: 'MessagingFailed', data: { reply_id, attempt, status_code: null, error: messageOf(error), permanent: false } };
    }
    await run(reply_id, outcome, context.causation_id);
  }

  /** Replies the read model shows as due; the process manager checks each against its stream. */
  async function due(now: Date): Promise<WhatsAppReplyDocument[]> {
    const lostBefore = new Date(now.getTime() - policy.outcomeTimeoutMs).toISOString();
    const queries: Array<{ where: Where; field: string }> = [
      { where: { status: 'retrying', next_attempt_at: { lte: now.toISOString() } }, field: 'next_attempt_at' },
      { where: { status: 'sending', last_attempt_at: { lte: lostBefore } }, field: 'last_attempt_at' },
      { where: { status: 'queued', queued_at: { lte: lostBefore } }, field: 'queued_at' },
    ];
    const replies = deps.readStore.collection<WhatsAppReplyDocument>(WHATSAPP_REPLIES);
    const pages = await Promise.all(queries.map(({ where, field }) => replies.find({ where, sort: { field, direction: 'asc' }, limit: DUE_PAGE })));
    return pages.flatMap((page) => page.items);
  }

  return {
    name: WHATSAPP_REPLIES_SAGA,
    version: 1,
    filter: { kind: 'event_type', types: ['WhatsAppReplyQueued'] },
    async handle(event) {
      await run(event.data.reply_id, { type: 'WhatsAppReplyQueued', data: { reply_id: event.data.reply_id } }, event.id);
    },
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now();
      await forEachConcurrently(await due(now), policy.concurrency, async (reply) => {
        try {
          await run(reply.id, { type: 'WhatsAppReplyDue', data: { reply_id: reply.id } }, null);
        } catch (error) {
          // Stays due: the next pass tries again.
          logger.error({ err: error, reply_id: reply.id }, 'due WhatsApp reply delivery failed');
        }
      });
    },
  };
}
