// The shared rate limiter, used when the read store is MongoDB: one token bucket per key in
// the `rate_limits` collection, refilled and drawn from in a single atomic update, so every
// platform process behind a balancer spends from the same budget. Same arithmetic as the
// embedded token bucket (capacity `limit`, refilled evenly over the window). A bucket left
// alone for a whole window is full again, so a TTL index deletes it then.

import type { Collection, Db } from 'mongodb';
import type { Clock } from '../../application/ports/clock';
import type { RateDecision, RateLimit, RateLimiter } from '../../application/ports/rate-limiter';

export const RATE_LIMITS_COLLECTION = 'rate_limits';

interface BucketDocument {
  _id: string;
  tokens: number;
  /** Milliseconds since the epoch, from the platform's clock. */
  updated_at: number;
  allowed: boolean;
  expires_at: Date;
}

const DUPLICATE_KEY = 11000;

export class MongoRateLimiter implements RateLimiter {
  private constructor(
    private readonly buckets: Collection<BucketDocument>,
    private readonly clock: Clock,
  ) {}

  static async create(db: Db, clock: Clock): Promise<MongoRateLimiter> {
    const buckets = db.collection<BucketDocument>(RATE_LIMITS_COLLECTION);
    await buckets.createIndex({ expires_at: 1 }, { name: 'expires_at_ttl', expireAfterSeconds: 0 });
    return new MongoRateLimiter(buckets, clock);
  }

  async consume(key: string, limit: RateLimit): Promise<RateDecision> {
    try {
      return await this.take(key, limit);
    } catch (error) {
      // Two first attempts on one key can both try to insert its bucket; the loser retries
      // and finds the winner's.
      if ((error as { code?: unknown }).code === DUPLICATE_KEY) return this.take(key, limit);
      throw error;
    }
  }

  async check(key: string, { limit, windowSeconds }: RateLimit): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const perMs = limit / (windowSeconds * 1000);
    const bucket = await this.buckets.findOne({ _id: key });
    const tokens = bucket ? Math.min(limit, bucket.tokens + Math.max(0, now - bucket.updated_at) * perMs) : limit;
    return tokens >= 1 ? { allowed: true, retryAfterSeconds: 0 } : { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
  }

  private async take(key: string, { limit, windowSeconds }: RateLimit): Promise<RateDecision> {
    const now = this.clock.now().getTime();
    const perMs = limit / (windowSeconds * 1000);
    const elapsed = { $max: [0, { $subtract: [now, { $ifNull: ['$updated_at', now] }] }] };
    const bucket = await this.buckets.findOneAndUpdate(
      { _id: key },
      [
        { $set: { tokens: { $min: [limit, { $add: [{ $ifNull: ['$tokens', limit] }, { $multiply: [elapsed, perMs] }] }] }, updated_at: now } },
        { $set: { allowed: { $gte: ['$tokens', 1] } } },
        { $set: { tokens: { $cond: ['$allowed', { $subtract: ['$tokens', 1] }, '$tokens'] }, expires_at: new Date(now + windowSeconds * 1000) } },
      ],
      { upsert: true, returnDocument: 'after' },
    );
    if (!bucket) throw new Error(`rate limit bucket ${key} was not written`);
    if (bucket.allowed) return { allowed: true, retryAfterSeconds: 0 };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)) };
  }
}
