/** Abuse controls: a budget of attempts per key and window. */
export interface RateLimit {
  /** Attempts allowed per window. */
  limit: number;
  windowSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  /** When refused: seconds until the next attempt is allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Takes one attempt from `key`'s budget. */
  consume(key: string, limit: RateLimit): Promise<RateDecision>;
  /** Whether `consume` would allow an attempt now, taking nothing. */
  check(key: string, limit: RateLimit): Promise<RateDecision>;
}
