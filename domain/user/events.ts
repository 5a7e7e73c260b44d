// User events. Passwords and one-time codes appear only as hashes.

import * as t from 'io-ts';
import { eventCodec } from '../shared/codecs';

export const OtpPurpose = t.keyof({ email_verification: null, password_reset: null });
export type OtpPurpose = t.TypeOf<typeof OtpPurpose>;

export const UserRegistered = eventCodec(
  'UserRegistered',
  t.type({ user_id: t.string, email: t.string, name: t.string, password_hash: t.string, registered_at: t.string }),
);
export const OtpIssued = eventCodec('OtpIssued', t.type({ user_id: t.string, purpose: OtpPurpose, code_hash: t.string, expires_at: t.string }));
export const OtpAttemptFailed = eventCodec('OtpAttemptFailed', t.type({ user_id: t.string, purpose: OtpPurpose, attempts: t.number }));
export const EmailVerified = eventCodec('EmailVerified', t.type({ user_id: t.string, verified_at: t.string }));
export const PasswordReset = eventCodec('PasswordReset', t.type({ user_id: t.string, password_hash: t.string, reset_at: t.string }));
export const LoginFailed = eventCodec('LoginFailed', t.type({ user_id: t.string, reason: t.string, failed_at: t.string }));

export const UserEvent = t.union([UserRegistered, OtpIssued, OtpAttemptFailed, EmailVerified, PasswordReset, LoginFailed]);
export type UserEvent = t.TypeOf<typeof UserEvent>;
