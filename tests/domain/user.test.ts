import { expect } from 'chai';
import type { UserEvent } from '../../domain/user/events';
import { OTP_MAX_ATTEMPTS, emailProblem, userDecider } from '../../domain/user/user';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(userDecider);
const registered: UserEvent = {
  type: 'UserRegistered',
  data: { user_id: 'u1', email: 'ada@example.com', name: 'Ada', password_hash: 'hash', registered_at: FIXED_NOW.toISOString() },
};
const inTenMinutes = new Date(FIXED_NOW.getTime() + 600_000).toISOString();
const otp: UserEvent = { type: 'OtpIssued', data: { user_id: 'u1', purpose: 'email_verification', code_hash: 'right', expires_at: inTenMinutes } };

describe('email addresses (#9.8)', () => {
  it('accepts ordinary addresses, plus tags and dots', () => {
    for (const email of ['ada@example.com', 'ada.lovelace+svc@mail.example.co.uk', "o'brien@example.ie", 'x@a-b.io', `${'a'.repeat(64)}@example.com`]) {
      expect(emailProblem(email), email).to.equal(null);
    }
  });

  it('refuses markup, spaces, bad dots, bad labels and lengths past RFC 5321', () => {
    for (const email of [
      '<script>alert(1)</script>@x.io',
      'ada@<b>x</b>.io',
      'a b@example.com',
      '"ada"@example.com',
      '.ada@example.com',
      'ada.@example.com',
      'a..da@example.com',
      'ada@example',
      'ada@-example.com',
      'ada@example-.com',
      'ada@example..com',
      'ada@127.0.0.1',
      'ada@[127.0.0.1]',
      'adä@example.com',
      'ada@exämple.com',
      'ada@@example.com',
      `${'a'.repeat(65)}@example.com`,
      `ada@${'a'.repeat(64)}.com`,
      `ada@${'abcdefghi.'.repeat(25)}com`,
      'ada@example.com\u0000',
    ]) {
      expect(emailProblem(email), email).to.deep.include({ code: 'invalid_email', field: 'email' });
    }
  });
});

describe('user decider', () => {
  it('registers with a normalized email', () => {
    spec
      .given([])
      .when({ type: 'RegisterUser', data: { user_id: 'u1', email: ' Ada@Example.com ', name: ' Ada ', password_hash: 'hash' } })
      .then([registered]);
  });

  it('refuses a bad email and an empty name, naming the field', () => {
    spec.given([]).when({ type: 'RegisterUser', data: { user_id: 'u1', email: 'nope', name: 'Ada', password_hash: 'h' } }).thenThrows('invalid', 'invalid_email', 'email');
    spec.given([]).when({ type: 'RegisterUser', data: { user_id: 'u1', email: 'a@b.co', name: ' ', password_hash: 'h' } }).thenThrows('invalid', 'invalid_name', 'name');
  });

  it('verifies the email with the right code', () => {
    spec.given([registered, otp]).when({ type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'right' } }).then([
      { type: 'EmailVerified', data: { user_id: 'u1', verified_at: FIXED_NOW.toISOString() } },
    ]);
  });

  it('marks the email verified once when it was proven another way (an invitation), and not for a stranger', () => {
    const verified: UserEvent = { type: 'EmailVerified', data: { user_id: 'u1', verified_at: FIXED_NOW.toISOString() } };
    spec.given([registered, otp]).when({ type: 'MarkEmailVerified', data: {} }).then([verified]);
    spec.given([registered, verified]).when({ type: 'MarkEmailVerified', data: {} }).thenNothingHappened();
    spec.given([]).when({ type: 'MarkEmailVerified', data: {} }).thenThrows('not_found', 'user_not_found');
  });

  it('counts a wrong code as an attempt and refuses it', () => {
    spec
      .given([registered, otp])
      .when({ type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'wrong' } })
      .thenRejectsWithEvents('invalid', 'invalid_code', [{ type: 'OtpAttemptFailed', data: { user_id: 'u1', purpose: 'email_verification', attempts: 1 } }]);
  });

  it('refuses even the right code after too many attempts, after expiry, and once used', () => {
    const failures = Array.from({ length: OTP_MAX_ATTEMPTS }, (_, index): UserEvent => ({
      type: 'OtpAttemptFailed',
      data: { user_id: 'u1', purpose: 'email_verification', attempts: index + 1 },
    }));
    spec.given([registered, otp, ...failures]).when({ type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'right' } }).thenThrows('invalid', 'invalid_code', 'code');
    deciderSpec(userDecider, new Date(Date.parse(inTenMinutes) + 1))
      .given([registered, otp])
      .when({ type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'right' } })
      .thenThrows('invalid', 'invalid_code');
    const verified: UserEvent = { type: 'EmailVerified', data: { user_id: 'u1', verified_at: FIXED_NOW.toISOString() } };
    spec.given([registered, otp, verified]).when({ type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'right' } }).thenThrows('invalid', 'invalid_code');
  });

  it('resets the password with a reset code only', () => {
    const resetOtp: UserEvent = { type: 'OtpIssued', data: { user_id: 'u1', purpose: 'password_reset', code_hash: 'reset', expires_at: inTenMinutes } };
    spec.given([registered, otp]).when({ type: 'ResetPassword', data: { code_hash: 'right', password_hash: 'new' } }).thenThrows('invalid', 'invalid_code');
    spec.given([registered, resetOtp]).when({ type: 'ResetPassword', data: { code_hash: 'reset', password_hash: 'new' } }).then([
      { type: 'PasswordReset', data: { user_id: 'u1', password_hash: 'new', reset_at: FIXED_NOW.toISOString() } },
    ]);
  });
});

describe('closing an account', () => {
  const close = { type: 'CloseAccount' as const, data: { deleted_tenants: ['t1'], email_reservation: 'digest' } };
  const closed: UserEvent = { type: 'UserAccountClosed', data: { user_id: 'u1', deleted_tenants: ['t1'], email_reservation: 'digest', closed_at: FIXED_NOW.toISOString() } };

  it('closes a registered account, naming the organizations deleted with it and the email reservation to release', () => {
    spec.given([registered]).when(close).then([closed]);
  });

  it('records nothing when closed already, and refuses an account that does not exist', () => {
    spec.given([registered, closed]).when(close).thenNothingHappened();
    spec.given([]).when(close).thenThrows('not_found', 'user_not_found');
  });

  it('accepts nothing more once closed: no code, no password reset, no second registration', () => {
    spec.given([registered, closed]).when({ type: 'IssueOtp', data: { purpose: 'password_reset', code_hash: 'h', expires_at: inTenMinutes } }).thenThrows('not_found', 'user_not_found');
    spec.given([registered, closed]).when({ type: 'MarkEmailVerified', data: {} }).thenThrows('not_found', 'user_not_found');
    spec.given([registered, closed]).when({ type: 'RegisterUser', data: { user_id: 'u1', email: 'ada@example.com', name: 'Ada', password_hash: 'h' } }).thenThrows('conflict', 'user_exists');
  });
});
