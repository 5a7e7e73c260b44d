// The embedded rate limiter: a token bucket per key in memory (capacity `limit`, refilled
// evenly over the window). Per process: used with the embedded stores, which serve one
// platform process; with MongoDB the shared limiter of mongodb.ts takes its place.
//
// The buckets live in an LRU cache (lru-cache): at most MAX_KEYS of them, and a bucket
// left alone for a whole window is dropped, since by then it would be full again anyway.

import { LRUCache } from 'lru-cache';
import type { Clock } from '../../application/ports/clock';
import type { RateDecision, RateLimit, RateLimiter } from '../../application/ports/rate-limiter';

interface Bucket {
  tokens: number;
  updatedAt: number;
}

const MAX_KEYS = 100_000;

export class TokenBucketRateLimiter implements RateLimiter {
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(private readonly clock: Clock) {
    // The platform's clock, so a bucket is dropped exactly when it would be full.
    this.buckets = new LRUCache({ max: MAX_KEYS, perf: { now: () => clock.now().getTime() }, ttlResolution: 0 });
  }

  async check(key: string, { limit, windowSeconds }: RateLimit): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const perMs = limit / (windowSeconds * 1000);
    const bucket = this.buckets.get(key);
    const tokens = bucket ? Math.min(limit, bucket.tokens + (now - bucket.updatedAt) * perMs) : limit;
    return tokens >= 1 ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
  }

  async consume(key: string, { limit, windowSeconds }: RateLimit): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const windowMs = windowSeconds * 1000;
    const perMs = limit / windowMs;
    const bucket = this.buckets.get(key) ?? { tokens: limit, updatedAt: now };
    bucket.tokens = Math.min(limit, bucket.tokens + (now - bucket.updatedAt) * perMs);
    bucket.updatedAt = now;
    // Setting it again makes it the most recently used and starts its window again.
    this.buckets.set(key, bucket, { ttl: windowMs });
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
  }
}
