import { type EmailEvent, emailDecider } from '../../domain/email/email';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(emailDecider);
const at = FIXED_NOW.toISOString();
const queued: EmailEvent = { type: 'EmailQueued', data: { email_id: 'e1', to: 'ada@example.com', subject: 'Verify', body_sealed: 'sealed', kind: 'email_verification', queued_at: at } };
const sent: EmailEvent = { type: 'EmailSent', data: { email_id: 'e1', provider: 'smtp', provider_message_id: null, sent_at: at } };

describe('email decider', () => {
  describe('an admin reading the body', () => {
    it('is recorded whether the email is queued or already sent, with whether codes were shown', () => {
      spec.given([queued]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: true } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: true, read_at: at } },
      ]);
      spec.given([queued, sent]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: false } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: false, read_at: at } },
      ]);
    });

    it('is recorded again on every read, and does not change delivery', () => {
      const read: EmailEvent = { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: true, read_at: at } };
      spec.given([queued, read]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a2', codes_shown: true } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a2', codes_shown: true, read_at: at } },
      ]);
      spec.given([queued, read]).when({ type: 'RecordEmailSent', data: { provider: 'smtp', provider_message_id: null } }).then([sent]);
    });

    it('refuses an email that does not exist', () => {
      spec.given([]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: true } }).thenThrows('not_found', 'email_not_found');
    });
  });
});
