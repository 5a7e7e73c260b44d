// The mail delivery saga: its process manager given/when/then, and the saga over embedded
// stores with a clock held still: a redelivered EmailQueued sends nothing twice, retries and
// their schedule are events of the email, and the due pass (not infrastructure redelivery)
// drives them.

import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { type MailDeliveryInput, type MailDeliveryOutput, type MailDeliveryPolicy, RECIPIENT_ERASED_ERROR, mailDelivery, mailDeliverySaga } from '../../application/mail/mail-delivery';
import { emailAggregate, queueEmail } from '../../application/mail/outbox';
import type { RecordedEvent } from '../../application/ports/event-store';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { silentLogger } from '../../application/ports/logger';
import type { Mailer, OutgoingEmail } from '../../application/ports/mailer';
import { CheckpointedSagaDelivery } from '../../application/sagas/checkpointed-delivery';
import type { Saga } from '../../application/sagas/saga';
import { SagaRunner } from '../../application/sagas/saga-runner';
import type { EmailEvent, EmailQueuedEvent } from '../../domain/email/email';
import { emailStream } from '../../domain/email/email';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';
import { LogMailer } from '../../infrastructure/mail/log-mailer';
import { EMAILS, type EmailDocument, emailsProjection } from '../../projections/emails';
import { ProjectionRunner } from '../../projections/runner';
import { userContext } from '../support/context';
import { FIXED_NOW } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';
import { type EmbeddedStores, ManualClock, embeddedStores, eventually } from '../support/stores';

const policy: MailDeliveryPolicy = { maxAttempts: 3, backoffMs: (attempt) => 1000 * 2 ** (attempt - 1), outcomeTimeoutMs: 60_000 };
const plus = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);

describe('mail delivery process manager', () => {
  const spec = processManagerSpec(mailDelivery(policy));
  const queued: EmailQueuedEvent = {
    type: 'EmailQueued',
    data: { email_id: 'e1', to: 'ada@example.com', subject: 'Verify your email', body_sealed: 'sealed', kind: 'email_verification', queued_at: plus(-30_000).toISOString() },
  };
  const started = (attempt: number, at = FIXED_NOW): EmailEvent => ({ type: 'EmailSendStarted', data: { email_id: 'e1', attempt, started_at: at.toISOString() } });
  const failed = (attempt: number, next: Date): EmailEvent => ({
    type: 'EmailSendFailed',
    data: { email_id: 'e1', attempt, error: '421 try later', failed_at: FIXED_NOW.toISOString(), next_attempt_at: next.toISOString() },
  });
  const sent: EmailEvent = { type: 'EmailSent', data: { email_id: 'e1', provider: 'smtp', provider_message_id: 'm1', sent_at: FIXED_NOW.toISOString() } };
  const send = (attempt: number): MailDeliveryOutput => ({ type: 'SendEmail', data: { email_id: 'e1', attempt } });
  const due: MailDeliveryInput = { type: 'EmailDeliveryDue', data: { email_id: 'e1' } };
  const refused = (attempt: number): MailDeliveryInput => ({ type: 'MailerFailed', data: { email_id: 'e1', attempt, error: '421 try later' } });
  const accepted = (attempt: number): MailDeliveryInput => ({ type: 'MailerAccepted', data: { email_id: 'e1', attempt, provider: 'smtp', provider_message_id: 'm1' } });

  it('asks to send a queued email, and nothing when EmailQueued comes again', () => {
    spec.given([queued]).when(queued).then([send(1)]);
    spec.given([queued, started(1)]).when(queued).thenNothingHappened();
    spec.given([queued, started(1), sent]).when(queued).thenNothingHappened();
    spec.given([queued, started(1), failed(1, plus(1000))]).when(queued).thenNothingHappened();
  });

  it('records the mailer accepting it, once', () => {
    spec.given([queued, started(1)]).when(accepted(1)).then([{ type: 'RecordEmailSent', data: { provider: 'smtp', provider_message_id: 'm1' } }]);
    spec.given([queued, started(1), sent]).when(accepted(1)).thenNothingHappened();
  });

  it('records an email a mailer without a transport took as kept, never as sent (#9.7)', () => {
    const kept: MailDeliveryInput = { type: 'MailerKept', data: { email_id: 'e1', attempt: 1, provider: 'log' } };
    const keptEvent: EmailEvent = { type: 'EmailKept', data: { email_id: 'e1', provider: 'log', kept_at: FIXED_NOW.toISOString() } };
    spec.given([queued, started(1)]).when(kept).then([{ type: 'RecordEmailKept', data: { provider: 'log' } }]);
    spec.given([queued, started(1), keptEvent]).when(kept).thenNothingHappened();
    spec.given([queued, started(1), keptEvent]).when(queued).thenNothingHappened();
    spec.given([queued, started(1), keptEvent]).when(due).thenNothingHappened();
  });

  it('schedules the next attempt with exponential back-off, and gives up after the last', () => {
    spec.given([queued, started(1)]).when(refused(1)).then([{ type: 'RecordEmailFailure', data: { attempt: 1, error: '421 try later', next_attempt_at: plus(1000).toISOString() } }]);
    spec
      .given([queued, started(1), failed(1, FIXED_NOW), started(2)])
      .when(refused(2))
      .then([{ type: 'RecordEmailFailure', data: { attempt: 2, error: '421 try later', next_attempt_at: plus(2000).toISOString() } }]);
    spec.given([queued, started(1), failed(1, FIXED_NOW), started(2), failed(2, FIXED_NOW), started(3)]).when(refused(3)).then([{ type: 'AbandonEmail', data: { attempt: 3, error: '421 try later' } }]);
  });

  it('gives up at once an email whose recipient was erased, whatever attempt it is', () => {
    const erased = (attempt: number): MailDeliveryInput => ({ type: 'RecipientErased', data: { email_id: 'e1', attempt } });
    spec.given([queued, started(1)]).when(erased(1)).then([{ type: 'AbandonEmail', data: { attempt: 1, error: RECIPIENT_ERASED_ERROR } }]);
    spec.given([queued, started(1), failed(1, FIXED_NOW), started(2)]).when(erased(2)).then([{ type: 'AbandonEmail', data: { attempt: 2, error: RECIPIENT_ERASED_ERROR } }]);
    spec.given([queued, started(1), failed(1, FIXED_NOW), started(2)]).when(erased(1)).thenNothingHappened();
  });

  it('ignores an answer for an attempt that is already settled', () => {
    spec.given([queued, started(1), failed(1, FIXED_NOW), started(2)]).when(refused(1)).thenNothingHappened();
  });

  it('sends a scheduled retry when it is due, not before', () => {
    const waiting = [queued, started(1), failed(1, plus(1000))];
    spec.given(waiting).when(due, plus(999)).thenNothingHappened();
    spec.given(waiting).when(due, plus(1000)).then([send(2)]);
    spec.given([...waiting, started(2)]).when(due, plus(5000)).thenNothingHappened();
  });

  it('takes an attempt without an outcome as failed once the outcome timeout has passed', () => {
    spec.given([queued, started(1)]).when(due, plus(59_999)).thenNothingHappened();
    spec.given([queued, started(1)]).when(due, plus(60_000)).then([
      { type: 'RecordEmailFailure', data: { attempt: 1, error: "no outcome recorded within 60000 ms of the attempt's start", next_attempt_at: plus(61_000).toISOString() } },
    ]);
  });

  it('sends a queued email no delivery picked up, once the outcome timeout has passed since it was queued', () => {
    spec.given([queued]).when(due, plus(29_999)).thenNothingHappened();
    spec.given([queued]).when(due, plus(30_000)).then([send(1)]);
  });

  it('asks nothing for an email that is sent or abandoned', () => {
    spec.given([queued, started(1), sent]).when(due, plus(3_600_000)).thenNothingHappened();
    spec.given([queued, started(1), { type: 'EmailAbandoned', data: { email_id: 'e1', attempts: 1, error: 'x', abandoned_at: FIXED_NOW.toISOString() } }]).when(due, plus(3_600_000)).thenNothingHappened();
  });

  it('continues an email that failed before retries were events (EmailFailed) under the current rules', () => {
    spec
      .given([queued, { type: 'EmailFailed', data: { email_id: 'e1', error: 'refused', attempt: 2, failed_at: plus(-1000).toISOString() } }])
      .when(due)
      .then([send(3)]);
  });
});

/** A mailer that records every call and fails the ones it is told to. */
class RecordingMailer implements Mailer {
  readonly provider = 'test';
  readonly delivers = true;
  readonly calls: Array<{ to: string; text: string; key: string; unsubscribeUrl?: string }> = [];
  failures: string[] = [];

  async send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }> {
    this.calls.push({ to: email.to, text: email.text, key: idempotencyKey, ...(email.unsubscribeUrl === undefined ? {} : { unsubscribeUrl: email.unsubscribeUrl }) });
    const failure = this.failures.shift();
    if (failure) throw new Error(failure);
    return { messageId: `m${this.calls.length}` };
  }
}

describe('mail delivery saga', () => {
  let clock: ManualClock;
  let stores: EmbeddedStores;
  let mailer: RecordingMailer;
  let projections: ProjectionRunner;
  let saga: Saga<'EmailQueued'>;
  const secrets = new AesGcmSecrets(randomBytes(32));
  const context = { idempotencyKey: 'unused', attempt: 1, logger: silentLogger };

  beforeEach(async () => {
    clock = new ManualClock(new Date(FIXED_NOW));
    stores = embeddedStores(clock);
    mailer = new RecordingMailer();
    saga = mailDeliverySaga({ ...stores.commands, secrets, mailer, readStore: stores.readStore }, { ...policy, concurrency: 4 });
    projections = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock }, [emailsProjection], { retryDelayMs: 20, idleCheckpointMs: 0 });
    await projections.start();
  });
  afterEach(async () => {
    await projections.stop();
    await stores.dispose();
  });

  async function queue(to = 'ada@example.com', dataSubject = 'user:ada'): Promise<{ emailId: string; queued: RecordedOf<'EmailQueued'> }> {
    const emailId = await queueEmail({ ...stores.commands, secrets }, { to, data_subject: dataSubject, subject: 'Verify your email', text: 'Your code is 123456', kind: 'email_verification' }, userContext());
    const [queued] = await stores.events.readStream(emailStream(emailId));
    if (queued?.type !== 'EmailQueued') throw new Error(`${emailId} starts with ${queued?.type}`);
    return { emailId, queued };
  }
  const history = async (emailId: string): Promise<RecordedEvent[]> => stores.eventStore.readStream(emailStream(emailId));
  const types = async (emailId: string): Promise<string[]> => (await history(emailId)).map((event) => event.type);
  /** The due pass, once the emails read model has caught up with everything recorded. */
  const duePass = async (): Promise<void> => {
    expect(await projections.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
    await saga.runDue!({ logger: silentLogger });
  };
  const emailDocument = async (emailId: string): Promise<EmailDocument | null> => {
    expect(await projections.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
    return stores.readStore.collection<EmailDocument>(EMAILS).get(emailId);
  };

  it('keeps in the outbox, never as sent, what the log mailer (no SMTP_URL) took (#9.7)', async () => {
    const logMailer = new LogMailer(silentLogger, false);
    const outboxOnly = mailDeliverySaga({ ...stores.commands, secrets, mailer: logMailer, readStore: stores.readStore }, { ...policy, concurrency: 4 });
    const { emailId, queued } = await queue();
    await outboxOnly.handle(queued, context);
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailKept']);
    const doc = await emailDocument(emailId);
    expect(doc).to.deep.include({ status: 'kept', provider: 'log', sent_at: null, next_attempt_at: null });
    // Kept is final: the due pass does not take it up again, even long after.
    clock.advance(24 * 3600_000);
    await outboxOnly.runDue!({ logger: silentLogger });
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailKept']);
  });

  it('sends once when EmailQueued is delivered twice, one after the other or both at once', async () => {
    const first = await queue('one@example.com');
    await saga.handle(first.queued, context);
    await saga.handle(first.queued, context);
    const second = await queue('two@example.com');
    await Promise.all([saga.handle(second.queued, context), saga.handle(second.queued, context)]);
    expect(mailer.calls.map((call) => call.to)).to.deep.equal(['one@example.com', 'two@example.com']);
    expect(mailer.calls[0]).to.deep.include({ text: 'Your code is 123456', key: `mail_delivery:${first.emailId}` });
    for (const { emailId } of [first, second]) expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailSent']);
    expect(await emailDocument(first.emailId)).to.deep.include({ status: 'sent', attempts: 1, provider: 'test', sent_at: FIXED_NOW.toISOString() });
  });

  it('hands the mailer the one-click unsubscribe link of an email that has one, sealed in its event like the body', async () => {
    const link = 'https://svc.example.test/notifications/unsubscribe?token=abc.def';
    const emailId = await queueEmail(
      { ...stores.commands, secrets },
      { to: 'ada@example.com', data_subject: 'user:ada', subject: 'An alert', text: 'Something ended', kind: 'orchestration_alert', unsubscribe_url: link },
      userContext(),
    );
    const [queued] = await stores.events.readStream(emailStream(emailId));
    if (queued?.type !== 'EmailQueued') throw new Error(`${emailId} starts with ${queued?.type}`);
    expect(JSON.stringify(queued.data)).not.to.contain('token=');
    expect(secrets.open(queued.data.unsubscribe_url_sealed!)).to.equal(link);
    await saga.handle(queued, context);
    expect(mailer.calls).to.deep.equal([{ to: 'ada@example.com', text: 'Something ended', key: `mail_delivery:${emailId}`, unsubscribeUrl: link }]);
    // An email without one (a verification code: always sent) carries none.
    const plain = await queue('bob@example.com');
    await saga.handle(plain.queued, context);
    expect(plain.queued.data).not.to.have.property('unsubscribe_url_sealed');
    expect(mailer.calls[1]).not.to.have.property('unsubscribeUrl');
  });

  it('records a refusal with its next attempt, and the due pass sends it when due, not before', async () => {
    mailer.failures = ['421 try later'];
    const { emailId, queued } = await queue();
    await saga.handle(queued, context);
    const failure = (await history(emailId)).at(-1)!;
    expect(failure).to.deep.include({ type: 'EmailSendFailed' });
    expect(failure.data).to.deep.equal({ email_id: emailId, attempt: 1, error: '421 try later', failed_at: FIXED_NOW.toISOString(), next_attempt_at: plus(1000).toISOString() });
    expect(await emailDocument(emailId)).to.deep.include({ status: 'retrying', attempts: 1, last_error: '421 try later', next_attempt_at: plus(1000).toISOString() });

    await saga.handle(queued, context);
    clock.advance(999);
    await duePass();
    expect(mailer.calls).to.have.length(1);

    clock.advance(1);
    await duePass();
    expect(mailer.calls).to.have.length(2);
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailSendFailed', 'EmailSendStarted', 'EmailSent']);
    expect(await emailDocument(emailId)).to.deep.include({ status: 'sent', attempts: 2, next_attempt_at: null });
  });

  it('gives the email up after the last attempt (EmailAbandoned) and never sends it again', async () => {
    mailer.failures = ['refused', 'refused', 'refused', 'refused'];
    const { emailId, queued } = await queue();
    await saga.handle(queued, context);
    clock.advance(1000);
    await duePass();
    clock.advance(2000);
    await duePass();
    expect(await types(emailId)).to.deep.equal([
      'EmailQueued',
      'EmailSendStarted',
      'EmailSendFailed',
      'EmailSendStarted',
      'EmailSendFailed',
      'EmailSendStarted',
      'EmailAbandoned',
    ]);
    clock.advance(24 * 3_600_000);
    await duePass();
    await saga.handle(queued, context);
    expect(mailer.calls).to.have.length(3);
    expect(await emailDocument(emailId)).to.deep.include({ status: 'abandoned', attempts: 3, last_error: 'refused', next_attempt_at: null });
  });

  it('sends nothing to a recipient erased before the delivery (a closed account), and gives the email up', async () => {
    const { emailId } = await queue('closing@example.com', 'user:closing');
    // The stored form never held the address in clear.
    expect(JSON.stringify(await stores.eventStore.readStream(emailStream(emailId)))).to.not.include('closing@example.com');
    await stores.personalData.erase('user:closing');
    const [reread] = await stores.events.readStream(emailStream(emailId));
    await saga.handle(reread as RecordedOf<'EmailQueued'>, context);
    expect(mailer.calls).to.deep.equal([]);
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailAbandoned']);
    expect(reread.data).to.deep.include({ to: ERASED_PERSONAL_DATA });
    expect(await emailDocument(emailId)).to.deep.include({ status: 'abandoned', last_error: RECIPIENT_ERASED_ERROR });
    // The due pass never takes it up again.
    clock.advance(24 * 3_600_000);
    await duePass();
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailAbandoned']);
  });

  it('does not send again on a redelivery after a crash mid-send; the due pass takes the lost attempt as failed and tries again', async () => {
    const { emailId, queued } = await queue();
    // The process claimed attempt 1 and stopped before the mailer answered.
    await handleCommand(stores.commands, emailAggregate, emailStream(emailId), { type: 'StartEmailAttempt', data: { attempt: 1 } }, userContext());
    await saga.handle(queued, context);
    await duePass();
    expect(mailer.calls).to.have.length(0);

    clock.advance(policy.outcomeTimeoutMs);
    await duePass();
    expect((await history(emailId)).at(-1)).to.deep.include({ type: 'EmailSendFailed' });
    expect(mailer.calls).to.have.length(0);
    clock.advance(1000);
    await duePass();
    expect(mailer.calls).to.have.length(1);
    expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailSendFailed', 'EmailSendStarted', 'EmailSent']);
  });

  it('runs on the saga runner: a refusal is an event of the email, not a delivery failure for infrastructure to redeliver', async () => {
    const delivery = new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock }, { retryPollMs: 10, idleCheckpointMs: 0 });
    const runner = new SagaRunner(delivery, [saga], silentLogger, { maxAttempts: 3, concurrency: 4, duePollMs: 0 });
    await runner.start();
    try {
      mailer.failures = ['421 try later'];
      const { emailId } = await queue();
      await eventually(async () => (await types(emailId)).includes('EmailSendFailed'), 5000, 'the refusal recorded');
      expect(await delivery.listFailures()).to.deep.equal([]);
      clock.advance(1000);
      await projections.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 });
      await runner.runDue();
      expect(await types(emailId)).to.deep.equal(['EmailQueued', 'EmailSendStarted', 'EmailSendFailed', 'EmailSendStarted', 'EmailSent']);
    } finally {
      await runner.stop();
    }
  });
});
