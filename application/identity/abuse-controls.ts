// Rate limits on the unauthenticated identity mutations (spec 5.1 rule 8): per client IP and
// per email, each action with its own budget. A refusal is 429 `rate_limited` with
// Retry-After; it changes nothing.

import { normalizeEmail } from '../../domain/user/user';
import { DomainError } from '../../domain/shared/errors';
import type { RateLimit, RateLimiter } from '../ports/rate-limiter';

export type GuardedAction = 'register' | 'login' | 'verify_otp' | 'resend_verification' | 'request_password_reset' | 'reset_password';

export interface AbuseLimits {
  perIp: RateLimit;
  perEmail: RateLimit;
}

export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'rate_limited', `too many attempts; try again in ${retryAfterSeconds} s`);
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
