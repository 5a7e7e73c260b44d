// The super admin's view of the email outbox (spec 4.16): lists without bodies, and one email
// with its body. Reading a body is an event (`EmailBodyRead`, the admin as actor, in the
// email's tenant), and the one-time codes in it are shown only while the embedded outbox is
// the mailer: with a real mailer the recipient gets the code by email, and an operator who
// could read it could take the account over.

import { EMAILS, type EmailDocument } from '../../projections/emails';
import { notFound } from '../../domain/shared/errors';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { ReadModelDependencies } from '../shared/read-models';
import { emailAggregate } from '../mail/outbox';
import type { Page } from '../ports/read-store';
import type { RequestContext } from '../shared/request-context';
import { emailStream } from '../../domain/email/email';
import type { AdminPrincipal } from './admin-auth';

export type EmailView = Omit<EmailDocument, 'body_sealed' | 'position'>;

/** The statuses an email of the outbox can be in (a list filter). */
export const EMAIL_STATUSES: ReadonlyArray<EmailDocument['status']> = ['queued', 'sending', 'retrying', 'sent', 'kept', 'abandoned'];

export interface EmailWithBody extends EmailView {
  text: string;
  /** False when the one-time codes of the body were replaced by `[redacted]`. */
  codes_shown: boolean;
}

export const REDACTED = '[redacted]';

const emailView = ({ body_sealed: _sealed, position: _position, ...email }: EmailDocument): EmailView => email;

// Numeric codes (six digits or more) and tokens (twenty URL-safe characters or more, that are
// not a plain word): the shapes of every code and token the platform emails.
const NUMERIC_CODE = /\b\d{6,}\b/g;
const TOKEN = /[A-Za-z0-9_-]{20,}/g;
const PLAIN_WORD = /^[A-Za-z][a-z]*$/;

/** The body with its one-time codes and tokens replaced by `[redacted]`. */
export function redactOneTimeCodes(text: string): string {
  return text.replace(TOKEN, (candidate) => (PLAIN_WORD.test(candidate) ? candidate : REDACTED)).replace(NUMERIC_CODE, REDACTED);
}

export interface OutboxFilter {
  status?: EmailDocument['status'];
  to?: string;
}

/** The outbox, newest first, without bodies. */
export async function listOutbox(deps: ReadModelDependencies, filter: OutboxFilter, page: { limit?: number; cursor?: string }): Promise<Page<EmailView>> {
  const where = { ...(filter.status ? { status: filter.status } : {}), ...(filter.to ? { to: filter.to.toLowerCase() } : {}) };
  const found = await deps.readStore.collection<EmailDocument>(EMAILS).find({ where, sort: { field: 'queued_at', direction: 'desc' }, ...page });
  return { items: found.items.map(emailView), next_cursor: found.next_cursor };
}

/**
 * One email with its body, the read recorded first (nothing is shown if it cannot be). Codes
 * stay in the body only when `showOneTimeCodes` (the embedded outbox is the mailer).
 */
export async function readOutboxEmail(
  deps: CommandDependencies & ReadModelDependencies & { secrets: Pick<Secrets, 'open'> },
  admin: AdminPrincipal,
  emailId: string,
  options: { showOneTimeCodes: boolean },
  context: RequestContext,
): Promise<EmailWithBody> {
  const email = await deps.readStore.collection<EmailDocument>(EMAILS).get(emailId);
  if (!email) throw notFound('email_not_found', 'no such email');
  await handleCommand(
    deps,
    emailAggregate,
    emailStream(emailId),
    { type: 'RecordEmailBodyRead', data: { admin_id: admin.admin_id, codes_shown: options.showOneTimeCodes } },
    { ...context, tenant_id: email.tenant_id, actor: { kind: 'admin', id: admin.admin_id } },
  );
  const text = deps.secrets.open(email.body_sealed);
  return { ...emailView(email), text: options.showOneTimeCodes ? text : redactOneTimeCodes(text), codes_shown: options.showOneTimeCodes };
}
