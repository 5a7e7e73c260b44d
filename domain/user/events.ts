// User events. Passwords and one-time codes appear only as hashes.

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

export const userEvents = eventGroup('user', [UserRegistered, OtpIssued, OtpAttemptFailed, EmailVerified, PasswordReset, LoginFailed]);
export type UserEvent = GroupEvent<typeof userEvents>;
