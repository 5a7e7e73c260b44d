// Queueing email (the outbox); application/mail/mail-delivery.ts sends it.

import { type EmailEvent, type EmailState, emailDecider, emailEvents, emailStream } from '../../domain/email/email';
import type { EmailCommand } from '../../domain/email/email';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';

export const emailAggregate: Aggregate<EmailCommand, EmailEvent, EmailState> = { decider: emailDecider, events: emailEvents };

export interface QueuedEmail {
  to: string;
  /** Whose email it is (`user:<id>`, `invitation:<id>`): the address is sealed under that subject's key, erased with it. */
  data_subject: string;
  subject: string;
  text: string;
  kind: string;
  /** The one-click unsubscribe link (List-Unsubscribe, RFC 8058) of an email its recipient may do without. */
  unsubscribe_url?: string | null;
}

/** Queues an email; under an idempotency key its id comes from the key, so queueing it again queues nothing. */
export async function queueEmail(
  deps: CommandDependencies & { secrets: Secrets },
  email: QueuedEmail,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<string> {
  const emailId = options.idempotencyKey === undefined ? deps.ids.newId() : deps.ids.fromKey(options.idempotencyKey);
  await handleCommand(
    deps,
    emailAggregate,
    emailStream(emailId),
    {
      type: 'QueueEmail',
      data: {
        email_id: emailId,
        to: email.to,
        data_subject: email.data_subject,
        subject: email.subject,
        body_sealed: deps.secrets.seal(email.text),
        kind: email.kind,
        ...(email.unsubscribe_url ? { unsubscribe_url_sealed: deps.secrets.seal(email.unsubscribe_url) } : {}),
      },
    },
    context,
    { idempotencyKey: options.idempotencyKey },
  );
  return emailId;
}
