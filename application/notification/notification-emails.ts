// Emailing the people a notification preference covers: each recipient gets the email made for
// them, with their own one-click unsubscribe link (where the platform knows its public
// address), queued once under a key of theirs. The sagas that tell owners and admins of
// something (orchestration alerts, handoffs and leads that were not delivered) use it.

import { userSubject } from '../../domain/user/events';
import type { MembershipDocument } from '../../projections/memberships';
import type { CommandDependencies } from '../command-handling/handle-command';
import { queueEmail } from '../mail/outbox';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';
import type { NotificationKind } from '../../domain/notification-preferences/notification-preferences';
import { unsubscribeUrl } from './unsubscribe-links';

export interface NotificationEmailDependencies extends CommandDependencies {
  secrets: Secrets;
  /** The platform's public base URL (PUBLIC_URL), on which each email's unsubscribe link is made; null: none (the email then says how through the API). */
  publicUrl: string | null;
}

export interface NotificationEmail {
  tenantId: string;
  /** The preference that covers it: what its unsubscribe link turns off. */
  preference: NotificationKind;
  /** The outbox's kind of email. */
  kind: string;
  /** The subject and text for one recipient, with their link (null without PUBLIC_URL). */
  compose(unsubscribeLink: string | null): { subject: string; text: string };
  /** The outbox idempotency key of one recipient's email: the same key queues nothing again. */
  idempotencyKey(userId: string): string;
}

export async function emailEach(
  deps: NotificationEmailDependencies,
  recipients: ReadonlyArray<Pick<MembershipDocument, 'user_id'> & { email: string }>,
  email: NotificationEmail,
  context: RequestContext,
): Promise<void> {
  for (const recipient of recipients) {
    const link = unsubscribeUrl(deps.secrets, deps.publicUrl, { tenant_id: email.tenantId, user_id: recipient.user_id, kind: email.preference });
    const { subject, text } = email.compose(link);
    await queueEmail(
      deps,
      { to: recipient.email, data_subject: userSubject(recipient.user_id), subject, text, kind: email.kind, unsubscribe_url: link },
      context,
      { idempotencyKey: email.idempotencyKey(recipient.user_id) },
    );
  }
}

/** `2026-12-02 14:05 UTC`: a time as these emails tell it. */
export const readableUtc = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** How a person stops an email: their one-click link where there is one, and the API's way. */
export const turnOffForYourself = (preference: NotificationKind, unsubscribeLink: string | null): string =>
  unsubscribeLink === null
    ? `Turn them off for yourself: PATCH /api/v1/me/notifications {"${preference}": false}`
    : `Turn them off for yourself: ${unsubscribeLink} (or PATCH /api/v1/me/notifications {"${preference}": false})`;

/** The UTC hour (since the epoch) an instant falls in: what an at-most-once-an-hour email's key names. */
export const utcHourOf = (iso: string): number => Math.floor(Date.parse(iso) / 3_600_000);
