// The mailer without a transport (no SMTP_URL): the outbox events are the record of every
// email, each recorded as kept, never as sent. In development the email is also printed to
// the log so a developer can read the code in it; elsewhere (production only with
// MAIL_OUTBOX_ONLY=true) a warning says the email went nowhere.

import type { Logger } from '../../application/ports/logger';
import type { Mailer, OutgoingEmail } from '../../application/ports/mailer';

export class LogMailer implements Mailer {
  readonly provider = 'log';
  readonly delivers = false;

  constructor(
    private readonly logger: Logger,
    private readonly printBodies: boolean,
  ) {}

  async send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }> {
    // Bodies can hold one-time codes: printed only in development.
    const fields = this.printBodies ? { to: email.to, subject: email.subject, text: email.text } : { to: email.to, subject: email.subject };
    if (this.printBodies) this.logger.info({ ...fields, idempotency_key: idempotencyKey }, 'email (log mailer)');
    else this.logger.warn({ ...fields, idempotency_key: idempotencyKey }, 'email kept in the outbox, not sent: no SMTP_URL');
    return { messageId: null };
  }
}
