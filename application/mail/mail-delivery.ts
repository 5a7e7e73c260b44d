// Saga `mail_delivery` (version 2): sends each queued email, and keeps every attempt, failure,
// scheduled retry and the final give-up as events of the email itself, so the email's
// stream is the one source of truth for attempts.
//
// `mailDelivery` is the process manager (pure): given the email's events and an input, the
// next step. `mailDeliverySaga` runs it: `EmailQueued` arrives through the saga
// subscription; retries come from a scan of the `emails` read model for what is due
// (`runDue`), never from infrastructure redelivery, which is left for crashes and
// unexpected errors. A mailer error is an outcome, recorded, not thrown. An email whose
// recipient's address reads as erased (a closed account) is given up at its attempt, unsent.

import { type EmailCommand, type EmailEvent, type EmailQueuedEvent, type EmailState, emailDecider, emailStream } from '../../domain/email/email';
import { EMAILS, type EmailDocument } from '../../projections/emails';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { Mailer } from '../ports/mailer';
import type { ReadStore, Where } from '../ports/read-store';
import type { ProcessManager } from '../sagas/process-manager';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { emailAggregate } from './outbox';
import { messageOf } from '../../domain/shared/errors';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';

export const MAIL_DELIVERY = 'mail_delivery';

export interface MailDeliveryPolicy {
  /** Attempts before the email is abandoned (SAGA_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Delay after failed attempt n before attempt n+1, in ms. */
  backoffMs(attempt: number): number;
  /**
   * How long an attempt, or a queued email no delivery picked up, may go without an outcome
   * before it is taken as lost (the process stopped mid-send, or the trigger was never
   * delivered). Longer than any mailer call can take.
   */
  outcomeTimeoutMs: number;
}

/** SMTP connections may take minutes to time out (nodemailer's socket timeout is 10 min). */
export const DEFAULT_OUTCOME_TIMEOUT_MS = 15 * 60_000;

export type MailDeliveryInput =
  | EmailQueuedEvent
  /** The due scan found the email waiting: a scheduled retry, or an attempt with no outcome. */
  | { type: 'EmailDeliveryDue'; data: { email_id: string } }
  | { type: 'MailerAccepted'; data: { email_id: string; attempt: number; provider: string; provider_message_id: string | null } }
  /** A mailer without a transport took it: kept in the outbox, not sent. */
  | { type: 'MailerKept'; data: { email_id: string; attempt: number; provider: string } }
  | { type: 'MailerFailed'; data: { email_id: string; attempt: number; error: string } }
  /** The recipient's address reads as erased (its subject was erased: a closed account): nothing to send it to. */
  | { type: 'RecipientErased'; data: { email_id: string; attempt: number } };

/** Why an email whose recipient was erased is given up. */
export const RECIPIENT_ERASED_ERROR = 'the recipient’s address was erased; the email was not sent';

export type MailDeliveryOutput =
  /** Claim the attempt (StartEmailAttempt), then call the mailer; its answer comes back as an input. */
  | { type: 'SendEmail'; data: { email_id: string; attempt: number } }
  | Extract<EmailCommand, { type: 'RecordEmailSent' | 'RecordEmailKept' | 'RecordEmailFailure' | 'AbandonEmail' }>;

export function mailDelivery(policy: MailDeliveryPolicy): ProcessManager<MailDeliveryInput, EmailEvent, EmailState, MailDeliveryOutput> {
  const afterFailure = (attempt: number, error: string, now: Date): MailDeliveryOutput[] =>
    attempt >= policy.maxAttempts
      ? [{ type: 'AbandonEmail', data: { attempt, error } }]
      : [{ type: 'RecordEmailFailure', data: { attempt, error, next_attempt_at: new Date(now.getTime() + policy.backoffMs(attempt)).toISOString() } }];
  const overdue = (since: string, now: Date): boolean => Date.parse(since) + policy.outcomeTimeoutMs <= now.getTime();

  return {
    initialState: emailDecider.initialState,
    evolve: emailDecider.evolve,
    decide(input, state, { now }) {
      if (state.status === 'absent') return [];
      const send = (attempt: number): MailDeliveryOutput[] => [{ type: 'SendEmail', data: { email_id: state.email_id, attempt } }];
      switch (input.type) {
        case 'EmailQueued':
          // Sent, being sent, or waiting for its retry: a redelivered trigger asks for nothing.
          return state.status === 'queued' ? send(1) : [];
        case 'EmailDeliveryDue':
          switch (state.status) {
            case 'queued':
              return overdue(state.queued_at, now) ? send(1) : [];
            case 'retrying':
              return Date.parse(state.next_attempt_at) <= now.getTime() ? send(state.attempts + 1) : [];
            case 'sending':
              return overdue(state.started_at, now)
                ? afterFailure(state.attempts, `no outcome recorded within ${policy.outcomeTimeoutMs} ms of the attempt's start`, now)
                : [];
            default:
              return [];
          }
        case 'MailerAccepted':
          return state.status === 'sent' ? [] : [{ type: 'RecordEmailSent', data: { provider: input.data.provider, provider_message_id: input.data.provider_message_id } }];
        case 'MailerKept':
          return state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'RecordEmailKept', data: { provider: input.data.provider } }];
        case 'MailerFailed':
          return state.status === 'sending' && state.attempts === input.data.attempt ? afterFailure(input.data.attempt, input.data.error, now) : [];
        case 'RecipientErased':
          // No later attempt could do better.
          return state.status === 'sending' && state.attempts === input.data.attempt ? [{ type: 'AbandonEmail', data: { attempt: input.data.attempt, error: RECIPIENT_ERASED_ERROR } }] : [];
      }
    },
  };
}

export interface MailDeliveryDependencies extends CommandDependencies {
  secrets: Secrets;
  mailer: Mailer;
  readStore: ReadStore;
}

/** Emails one due pass looks at per kind; the next pass takes the rest. */
const DUE_PAGE = 100;

export function mailDeliverySaga(deps: MailDeliveryDependencies, policy: MailDeliveryPolicy & { concurrency: number }): Saga<'EmailQueued'> {
  const process = mailDelivery(policy);

  /** Feeds one input to the process manager over the email's current state, and carries out what it decides. */
  async function run(emailId: string, input: MailDeliveryInput, causationId: string | null): Promise<void> {
    const stream = emailStream(emailId);
    const [first] = await deps.eventStore.readStream(stream, { maxCount: 1 });
    if (!first) return;
    if (first.type !== 'EmailQueued') throw new Error(`${stream}@0: expected EmailQueued, found ${first.type}`);
    const queued: EmailQueuedEvent = { type: first.type, data: first.data };
    const context = { ...systemContext(first.metadata.correlation_id, MAIL_DELIVERY, causationId ?? first.id), tenant_id: first.metadata.tenant_id };
    const { state } = await loadAggregate(deps, emailAggregate, stream);
    for (const output of process.decide(input, state, { now: deps.clock.now() })) {
      if (output.type === 'SendEmail') await send(queued, output.data.attempt, context);
      else await handleCommand(deps, emailAggregate, stream, output, context);
    }
  }

  async function send(queued: EmailQueuedEvent, attempt: number, context: RequestContext): Promise<void> {
    const { email_id, to, subject, body_sealed, unsubscribe_url_sealed } = queued.data;
    const text = deps.secrets.open(body_sealed);
    const unsubscribe = unsubscribe_url_sealed === undefined ? {} : { unsubscribeUrl: deps.secrets.open(unsubscribe_url_sealed) };
    // The claim. No idempotency key on purpose: the append is checked against the revision
    // just read, so when two deliveries race for this attempt the loser re-reads, finds it
    // started, and appends nothing (derived ids would make its append succeed as a repeat).
    const claimed = await handleCommand(deps, emailAggregate, emailStream(email_id), { type: 'StartEmailAttempt', data: { attempt } }, context);
    if (claimed.events.length === 0) return;
    if (to === ERASED_PERSONAL_DATA) return run(email_id, { type: 'RecipientErased', data: { email_id, attempt } }, context.causation_id);
    let outcome: MailDeliveryInput;
    try {
      // The same key on every attempt: SMTP carries it as the Message-ID, so a receiver can drop a repeat.
      const { messageId } = await deps.mailer.send({ to, subject, text, ...unsubscribe }, `${MAIL_DELIVERY}:${email_id}`);
      outcome = deps.mailer.delivers
        ? { type: 'MailerAccepted', data: { email_id, attempt, provider: deps.mailer.provider, provider_message_id: messageId } }
        : { type: 'MailerKept', data: { email_id, attempt, provider: deps.mailer.provider } };
    } catch (error) {
      outcome = { type: 'MailerFailed', data: { email_id, attempt, error: messageOf(error) } };
    }
    await run(email_id, outcome, context.causation_id);
  }

  /** Emails the read model shows as due; the process manager checks each against its stream. */
  async function due(now: Date): Promise<EmailDocument[]> {
    const lostBefore = new Date(now.getTime() - policy.outcomeTimeoutMs).toISOString();
    const queries: Array<{ where: Where; field: string }> = [
      { where: { status: 'retrying', next_attempt_at: { lte: now.toISOString() } }, field: 'next_attempt_at' },
      { where: { status: 'sending', last_attempt_at: { lte: lostBefore } }, field: 'last_attempt_at' },
      { where: { status: 'queued', queued_at: { lte: lostBefore } }, field: 'queued_at' },
    ];
    const emails = deps.readStore.collection<EmailDocument>(EMAILS);
    const pages = await Promise.all(queries.map(({ where, field }) => emails.find({ where, sort: { field, direction: 'asc' }, limit: DUE_PAGE })));
    return pages.flatMap((page) => page.items);
  }

  return {
    name: MAIL_DELIVERY,
    version: 2,
    filter: { kind: 'event_type', types: ['EmailQueued'] },
    async handle(event) {
      await run(event.data.email_id, { type: event.type, data: event.data }, event.id);
    },
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now();
      await forEachConcurrently(await due(now), policy.concurrency, async (email) => {
        try {
          await run(email.id, { type: 'EmailDeliveryDue', data: { email_id: email.id } }, null);
        } catch (error) {
          // Stays due: the next pass tries again.
          logger.error({ err: error, email_id: email.id }, 'due email delivery failed');
        }
      });
    },
  };
}
