// The embedded mailer: the outbox events are the record of every email; in development the
// email is also printed to the log so a developer can read the code in it.

import type { Logger } from '../../application/ports/logger';
import type { Mailer, OutgoingEmail } from '../../application/ports/mailer';

export class LogMailer implements Mailer {
  readonly provider = 'log';

  constructor(
    private readonly logger: Logger,
    private readonly printBodies: boolean,
  ) {}

  async send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }> {
    // Bodies can hold one-time codes: printed only in development.
    const fields = this.printBodies ? { to: email.to, subject: email.subject, text: email.text } : { to: email.to, subject: email.subject };
    this.logger.info({ ...fields, idempotency_key: idempotencyKey }, 'email (log mailer)');
    return { messageId: null };
  }
}
