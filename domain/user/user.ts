// The user aggregate: a person's identity across tenants (email, name, password hash, email
// verification) and the one-time codes that verify the email or reset the password.
// Stream `user-<id>`. Hashing and code generation happen outside; decide compares hashes.

import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { DomainError, RejectionWithEvents, conflict, invalid, notFound } from '../shared/errors';
import { type OtpPurpose, type UserEvent, userEvents } from './events';
import { toStreamName } from '../shared/stream-names';
import { type TextRules, normalizeText, textProblem } from '../shared/text';

export const OTP_MAX_ATTEMPTS = 5;

export type UserCommand =
  | { type: 'RegisterUser'; data: { user_id: string; email: string; name: string; password_hash: string } }
  | { type: 'IssueOtp'; data: { purpose: OtpPurpose; code_hash: string; expires_at: string } }
  | { type: 'VerifyOtp'; data: { purpose: OtpPurpose; code_hash: string } }
  /** The email was proven another way (an accepted invitation's emailed token). */
  | { type: 'MarkEmailVerified'; data: Record<string, never> }
  | { type: 'ResetPassword'; data: { code_hash: string; password_hash: string } }
  | { type: 'RecordLoginFailure'; data: { reason: string } }
  /** The person closes their account, deleting with it the organizations named (those they were the only member of). */
  | { type: 'CloseAccount'; data: { deleted_tenants: string[]; email_reservation: string } };

interface PendingOtp {
  code_hash: string;
  expires_at: string;
  attempts: number;
}

export type UserState =
  | { status: 'absent' }
  /** Closed by the person: nothing more is accepted, and their email and name are erased. */
  | { status: 'closed'; id: string; closed_at: string }
  | {
      status: 'registered';
      id: string;
      email: string;
      name: string;
      password_hash: string;
      email_verified: boolean;
      otps: Partial<Record<OtpPurpose, PendingOtp>>;
    };

export const userStream = (userId: string): string => toStreamName(userEvents.category, userId);

// An address as SMTP carries it (RFC 5321, ASCII): a dot-atom local part of at most 64
// characters (letters, digits and !#$%&'*+/=?^_`{|}~-, dots only between them), an @, and a
// domain of at least two labels (letters, digits, inner hyphens, at most 63 each) whose last
// one is not all digits; 254 characters in all. Quoted local parts, address literals and
// non-ASCII (SMTPUTF8) addresses are refused: markup such as `<script>` can never pass.
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/i;
const DOMAIN_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

function isEmailAddress(email: string): boolean {
  if (email.length > 254) return false;
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const labels = email.slice(at + 1).split('.');
  return (
    at > 0 &&
    local.length <= 64 &&
    LOCAL_PART.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => DOMAIN_LABEL.test(label)) &&
    !/^[0-9]+$/.test(labels[labels.length - 1])
  );
}

/** Emails are compared and stored lowercased and trimmed. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export function emailProblem(email: string): DomainError | null {
  return isEmailAddress(email) ? null : invalid('invalid_email', 'email must be a valid address (name@example.com)', 'email');
}

const USER_NAME_RULES: TextRules = { max: 100, code: 'invalid_name' };

/** Why a person's name is refused (domain/shared/text.ts), or null; `field` names it in the request. */
export function nameProblem(name: string, field = 'name'): DomainError | null {
  return textProblem(field, name, USER_NAME_RULES);
}

/** Checks a code against the pending one: the outcome is events, or an error to answer. */
function checkOtp(
  state: Extract<UserState, { status: 'registered' }>,
  purpose: OtpPurpose,
  codeHash: string,
  now: Date,
): { ok: true } | { ok: false; events: UserEvent[]; error: DomainError } {
  const otp = state.otps[purpose];
  const wrong = invalid('invalid_code', 'the code is wrong or has expired; request a new one', 'code');
  if (!otp || otp.attempts >= OTP_MAX_ATTEMPTS || Date.parse(otp.expires_at) <= now.getTime()) return { ok: false, events: [], error: wrong };
  if (otp.code_hash !== codeHash) {
    return { ok: false, events: [{ type: 'OtpAttemptFailed', data: { user_id: state.id, purpose, attempts: otp.attempts + 1 } }], error: wrong };
  }
  return { ok: true };
}

export const userDecider: Decider<UserCommand, UserEvent, UserState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    if (event.type === 'UserRegistered') {
      return {
        status: 'registered',
        id: event.data.user_id,
        email: event.data.email,
        name: event.data.name,
        password_hash: event.data.password_hash,
        email_verified: false,
        otps: {},
      };
    }
    if (event.type === 'UserAccountClosed') return { status: 'closed', id: event.data.user_id, closed_at: event.data.closed_at };
    if (state.status !== 'registered') return state;
    switch (event.type) {
      case 'OtpIssued':
        return { ...state, otps: { ...state.otps, [event.data.purpose]: { code_hash: event.data.code_hash, expires_at: event.data.expires_at, attempts: 0 } } };
      case 'OtpAttemptFailed': {
        const otp = state.otps[event.data.purpose];
        return otp ? { ...state, otps: { ...state.otps, [event.data.purpose]: { ...otp, attempts: event.data.attempts } } } : state;
      }
      case 'EmailVerified':
        return { ...state, email_verified: true, otps: { ...state.otps, email_verification: undefined } };
      case 'PasswordReset':
        return { ...state, password_hash: event.data.password_hash, email_verified: true, otps: { ...state.otps, password_reset: undefined } };
      case 'LoginFailed':
        return state;
    }
  },

  decide(command, state, { now }): Either<DomainError, UserEvent[]> {
    if (command.type === 'RegisterUser') {
      if (state.status !== 'absent') return left(conflict('user_exists', 'the user already exists'));
      const problem = emailProblem(normalizeEmail(command.data.email)) ?? nameProblem(command.data.name);
      if (problem) return left(problem);
      return right([
        {
          type: 'UserRegistered',
          data: { ...command.data, email: normalizeEmail(command.data.email), name: normalizeText(command.data.name), registered_at: now.toISOString() },
        },
      ]);
    }
    if (command.type === 'CloseAccount') {
      if (state.status === 'absent') return left(notFound('user_not_found', 'no such user'));
      // Closed already: a repeated request records nothing.
      if (state.status === 'closed') return right([]);
      return right([{ type: 'UserAccountClosed', data: { user_id: state.id, ...command.data, closed_at: now.toISOString() } }]);
    }
    if (state.status !== 'registered') return left(notFound('user_not_found', 'no such user'));
    switch (command.type) {
      case 'IssueOtp':
        if (command.data.purpose === 'email_verification' && state.email_verified) return left(conflict('email_already_verified', 'the email is already verified'));
        return right([{ type: 'OtpIssued', data: { user_id: state.id, ...command.data } }]);
      case 'VerifyOtp': {
        const check = checkOtp(state, command.data.purpose, command.data.code_hash, now);
        if (!check.ok) return left(check.events.length ? new RejectionWithEvents(check.events, check.error) : check.error);
        return right([{ type: 'EmailVerified', data: { user_id: state.id, verified_at: now.toISOString() } }]);
      }
      case 'MarkEmailVerified':
        return state.email_verified ? right([]) : right([{ type: 'EmailVerified', data: { user_id: state.id, verified_at: now.toISOString() } }]);
      case 'ResetPassword': {
        const check = checkOtp(state, 'password_reset', command.data.code_hash, now);
        if (!check.ok) return left(check.events.length ? new RejectionWithEvents(check.events, check.error) : check.error);
        return right([{ type: 'PasswordReset', data: { user_id: state.id, password_hash: command.data.password_hash, reset_at: now.toISOString() } }]);
      }
      case 'RecordLoginFailure':
        return right([{ type: 'LoginFailed', data: { user_id: state.id, reason: command.data.reason, failed_at: now.toISOString() } }]);
    }
  },
};
