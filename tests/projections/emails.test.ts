// The emails read model follows each attempt of an email, including emails that failed
// before retries were events (EmailFailed).

import { expect } from 'chai';
import { EMAILS, type EmailDocument, emailsProjection } from '../../projections/emails';
import { newEvent } from '../support/events';
import { runningProjections } from '../support/stores';

describe('emails projection', () => {
  const running = runningProjections([emailsProjection]);
  const queued = (id: string) =>
    newEvent('EmailQueued', { email_id: id, to: 'ada@example.com', subject: 'Hi', body_sealed: 'sealed', kind: 'invitation', queued_at: '2026-11-22T09:00:00.000Z' });
  const email = async (id: string): Promise<EmailDocument | null> => {
    expect(await running.caughtUp()).to.equal(true);
    return running.stores.readStore.collection<EmailDocument>(EMAILS).get(id);
  };

  it('shows an attempt in flight, its failure with the next attempt, and the give-up', async () => {
    await running.stores.eventStore.appendToStream('email-e1', [
      queued('e1'),
      newEvent('EmailSendStarted', { email_id: 'e1', attempt: 1, started_at: '2026-11-22T09:00:01.000Z' }),
    ]);
    expect(await email('e1')).to.deep.include({ status: 'sending', attempts: 1, last_attempt_at: '2026-11-22T09:00:01.000Z', next_attempt_at: null });
    await running.stores.eventStore.appendToStream('email-e1', [
      newEvent('EmailSendFailed', { email_id: 'e1', attempt: 1, error: 'refused', failed_at: '2026-11-22T09:00:02.000Z', next_attempt_at: '2026-11-22T09:00:03.000Z' }),
    ]);
    expect(await email('e1')).to.deep.include({ status: 'retrying', attempts: 1, last_error: 'refused', next_attempt_at: '2026-11-22T09:00:03.000Z' });
    await running.stores.eventStore.appendToStream('email-e1', [
      newEvent('EmailSendStarted', { email_id: 'e1', attempt: 2, started_at: '2026-11-22T09:00:03.000Z' }),
      newEvent('EmailAbandoned', { email_id: 'e1', attempts: 2, error: 'refused again', abandoned_at: '2026-11-22T09:00:04.000Z' }),
    ]);
    expect(await email('e1')).to.deep.include({ status: 'abandoned', attempts: 2, last_error: 'refused again', next_attempt_at: null, abandoned_at: '2026-11-22T09:00:04.000Z' });
  });

  it('reads an old EmailFailed as a retry due at once, and an old EmailSent as one attempt', async () => {
    await running.stores.eventStore.appendToStream('email-e2', [queued('e2'), newEvent('EmailFailed', { email_id: 'e2', error: 'refused', attempt: 2, failed_at: '2026-11-22T09:05:00.000Z' })]);
    expect(await email('e2')).to.deep.include({ status: 'retrying', attempts: 2, next_attempt_at: '2026-11-22T09:05:00.000Z' });
    await running.stores.eventStore.appendToStream('email-e3', [queued('e3'), newEvent('EmailSent', { email_id: 'e3', provider: 'log', provider_message_id: null, sent_at: '2026-11-22T09:00:01.000Z' })]);
    expect(await email('e3')).to.deep.include({ status: 'sent', attempts: 1, sent_at: '2026-11-22T09:00:01.000Z' });
  });
});
