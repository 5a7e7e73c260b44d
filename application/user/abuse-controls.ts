// Rate limits on the unauthenticated identity mutations (spec 5.1 rule 8): per client IP and
// per email, each action with its own budget. A refusal is 429 `rate_limited` with
// Retry-After; it changes nothing.
//
// Login is different per email: only failures spend the email's budget, so that nobody can
// lock an account by failing on purpose. Past `perEmail` failures a wrong password is 429,
// but the right one still passes until the failures pass LOCK_FACTOR times that; then even
// the right one waits (a guessing campaign big enough to matter). Per IP, every attempt counts.

import { normalizeEmail } from '../../domain/user/user';
import { DomainError } from '../../domain/shared/errors';
import type { RateLimit, RateLimiter } from '../ports/rate-limiter';
import type { LoginFailureBudget } from '../session/login';

/** How many times the per-email failure budget an email's failures must reach before even its right password waits. */
export const LOCK_FACTOR = 10;

export type GuardedAction = 'register' | 'login' | 'verify_otp' | 'resend_verification' | 'request_password_reset' | 'reset_password';

export interface AbuseLimits {
  perIp: RateLimit;
  perEmail: RateLimit;
}

export class RateLimitedError extends DomainError {
  /** `what` says which budget was spent; the message adds when to try again. */
  constructor(
    readonly retryAfterSeconds: number,
    what = 'too many attempts',
  ) {
    super('rate_limited', 'rate_limited', `${what}; try again in ${retryAfterSeconds} s`);
  }
}

export async function guardAttempt(limiter: RateLimiter, limits: AbuseLimits, action: GuardedAction, ip: string | null, email: string | null): Promise<void> {
  const checks = [
    limiter.consume(`${action}:ip:${ip ?? 'unknown'}`, limits.perIp),
    ...(email ? [limiter.consume(`${action}:email:${normalizeEmail(email)}`, limits.perEmail)] : []),
  ];
  const refused = (await Promise.all(checks)).filter((decision) => !decision.allowed);
  if (refused.length > 0) throw new RateLimitedError(Math.max(...refused.map((decision) => decision.retryAfterSeconds)));
}

/** The per-email failure budgets of one login attempt (see the header); the per-IP one is `guardAttempt`'s. */
export function loginFailureBudget(limiter: RateLimiter, limits: AbuseLimits, email: string): LoginFailureBudget {
  const normalized = normalizeEmail(email);
  const failures = { key: `login:failures:${normalized}`, limit: limits.perEmail };
  const lock = { key: `login:lock:${normalized}`, limit: { ...limits.perEmail, limit: limits.perEmail.limit * LOCK_FACTOR } };
  return {
    async admit() {
      const decision = await limiter.check(lock.key, lock.limit);
      if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
    },
    async fail() {
      // Every failure counts toward the lock, including those the failure budget refuses.
      const [lockDecision, decision] = await Promise.all([limiter.consume(lock.key, lock.limit), limiter.consume(failures.key, failures.limit)]);
      if (!decision.allowed) throw new RateLimitedError(Math.max(decision.retryAfterSeconds, lockDecision.allowed ? 0 : lockDecision.retryAfterSeconds));
    },
  };
}
