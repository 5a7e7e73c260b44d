// The embedded rate limiter: a token bucket per key in memory (capacity `limit`, refilled
// evenly over the window). Per process: used with the embedded stores, which serve one
// platform process; with MongoDB the shared limiter of mongodb.ts takes its place.

import type { Clock } from '../../application/ports/clock';
import type { RateDecision, RateLimit, RateLimiter } from '../../application/ports/rate-limiter';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_KEYS = 100_000;

export class TokenBucketRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly clock: Clock) {}

  async consume(key: string, { limit, windowSeconds }: RateLimit): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const perMs = limit / (windowSeconds * 1000);
    const bucket = this.buckets.get(key) ?? { tokens: limit, updatedAt: now };
    bucket.tokens = Math.min(limit, bucket.tokens + (now - bucket.updatedAt) * perMs);
    bucket.updatedAt = now;
    // Re-inserting keeps the map in least-recently-used order for eviction.
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > MAX_KEYS) this.buckets.delete(this.buckets.keys().next().value as string);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
  }
}
