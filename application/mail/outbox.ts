// Queueing email (the outbox); application/mail/mail-delivery.ts sends it.

import { type EmailEvent, type EmailState, emailDecider, emailEvents, emailStream } from '../../domain/email/email';
import type { EmailCommand } from '../../domain/email/email';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';

export const emailAggregate: Aggregate<EmailCommand, EmailEvent, EmailState> = { decider: emailDecider, events: emailEvents };

export interface QueuedEmail {
  to: string;
  subject: string;
  text: string;
  kind: string;
}

export async function queueEmail(deps: CommandDependencies & { secrets: Secrets }, email: QueuedEmail, context: RequestContext): Promise<string> {
  const emailId = deps.ids.newId();
  await handleCommand(
    deps,
    emailAggregate,
    emailStream(emailId),
    { type: 'QueueEmail', data: { email_id: emailId, to: email.to, subject: email.subject, body_sealed: deps.secrets.seal(email.text), kind: email.kind } },
    context,
  );
  return emailId;
}
