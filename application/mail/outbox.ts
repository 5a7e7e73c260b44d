// Queueing email (the outbox) and the saga that delivers it.

import { EmailEvent, type EmailState, emailDecider, emailStream } from '../../domain/email/email';
import type { EmailCommand } from '../../domain/email/email';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { Mailer } from '../ports/mailer';
import type { RequestContext } from '../shared/request-context';
import { systemContext } from '../shared/request-context';
import type { Saga } from '../sagas/saga';

export const emailAggregate: Aggregate<EmailCommand, EmailEvent, EmailState> = { decider: emailDecider, events: EmailEvent };

export interface QueuedEmail {
  to: string;
  subject: string;
  text: string;
  kind: string;
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
    { type: 'QueueEmail', data: { email_id: emailId, to: email.to, subject: email.subject, body_sealed: deps.secrets.seal(email.text), kind: email.kind } },
    context,
    { idempotencyKey: options.idempotencyKey },
  );
  return emailId;
}

/** Delivers each queued email once (the mailer gets a stable idempotency key) and records the outcome. */
export function mailDeliverySaga(deps: CommandDependencies & { secrets: Secrets; mailer: Mailer }): Saga {
  return {
    name: 'mail_delivery',
    version: 1,
    filter: { kind: 'event_type', types: ['EmailQueued'] },
    async handle(event, context) {
      const data = event.data as { email_id: string; to: string; subject: string; body_sealed: string };
      const causation = { ...systemContext(event.metadata.correlation_id, 'mail_delivery', event.id), tenant_id: event.metadata.tenant_id };
      try {
        const { messageId } = await deps.mailer.send({ to: data.to, subject: data.subject, text: deps.secrets.open(data.body_sealed) }, context.idempotencyKey);
        await handleCommand(deps, emailAggregate, emailStream(data.email_id), { type: 'RecordEmailSent', data: { provider: deps.mailer.provider, provider_message_id: messageId } }, causation, {
          idempotencyKey: `${context.idempotencyKey}:sent`,
        });
      } catch (error) {
        await handleCommand(
          deps,
          emailAggregate,
          emailStream(data.email_id),
          { type: 'RecordEmailFailure', data: { error: error instanceof Error ? error.message : String(error), attempt: context.attempt } },
          causation,
          { idempotencyKey: `${context.idempotencyKey}:failed:${context.attempt}` },
        );
        throw error;
      }
    },
  };
}
