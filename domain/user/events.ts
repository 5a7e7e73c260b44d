// User events. Passwords and one-time codes appear only as hashes; the email and name are
// personal data of the subject `user:<id>` (docs/personal-data.md), sealed under its key, which
// closing the account deletes.

import * as t from 'io-ts';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';

export const OtpPurpose = t.keyof({ email_verification: null, password_reset: null });
export type OtpPurpose = t.TypeOf<typeof OtpPurpose>;

export const UserRegistered = declareEvent(
  'UserRegistered',
  t.type({ user_id: t.string, email: t.string, name: t.string, password_hash: t.string, registered_at: t.string }),
);
export const OtpIssued = declareEvent('OtpIssued', t.type({ user_id: t.string, purpose: OtpPurpose, code_hash: t.string, expires_at: t.string }));
export const OtpAttemptFailed = declareEvent('OtpAttemptFailed', t.type({ user_id: t.string, purpose: OtpPurpose, attempts: t.number }));
export const EmailVerified = declareEvent('EmailVerified', t.type({ user_id: t.string, verified_at: t.string }));
export const PasswordReset = declareEvent('PasswordReset', t.type({ user_id: t.string, password_hash: t.string, reset_at: t.string }));
export const LoginFailed = declareEvent('LoginFailed', t.type({ user_id: t.string, reason: t.string, failed_at: t.string }));
/**
 * The person closed their account: their email and name are erased (the subject's key is
 * deleted), they leave every organization, the organizations they were the only member of
 * (`deleted_tenants`, as they chose) are deleted with it, and their email's reservation (its
 * keyed digest: `email_reservation`, so it can be released once the email is unreadable) is
 * released.
 */
export const UserAccountClosed = declareEvent(
  'UserAccountClosed',
  t.type({ user_id: t.string, deleted_tenants: t.array(t.string), email_reservation: t.string, closed_at: t.string }),
);

/** The data subject of a member's identity: erasing it (closing the account) makes their email and name unreadable. */
export const userSubject = (userId: string): string => `user:${userId}`;

export const userEvents = eventGroup('user', [UserRegistered, OtpIssued, OtpAttemptFailed, EmailVerified, PasswordReset, LoginFailed, UserAccountClosed], {
  subject: (data) => userSubject(String(data.user_id)),
  fields: { UserRegistered: ['email', 'name'] },
  erasedBy: 'UserAccountClosed',
});
export type UserEvent = GroupEvent<typeof userEvents>;
