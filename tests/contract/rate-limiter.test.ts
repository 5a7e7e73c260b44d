import { MongoClient } from 'mongodb';
import { MongoRateLimiter, RATE_LIMITS_COLLECTION } from '../../infrastructure/rate-limit/mongodb';
import { TokenBucketRateLimiter } from '../../infrastructure/rate-limit/token-bucket';
import { rateLimiterContract } from './rate-limiter.contract';

describe('RateLimiter contract: embedded token bucket', () => {
  rateLimiterContract(async (clock) => ({ limiter: new TokenBucketRateLimiter(clock), dispose: async () => undefined }));
});

describe('RateLimiter contract: MongoDB', function () {
  const url = process.env.MONGODB_URL;
  if (!url) {
    it('is skipped: set MONGODB_URL (e.g. mongodb://localhost:27017/svc_test?replicaSet=rs0) to run it', function () {
      console.log('    MongoDB rate limiter contract skipped: MONGODB_URL is not set');
      this.skip();
    });
    return;
  }
  rateLimiterContract(async (clock) => {
    const client = await new MongoClient(url).connect();
    const limiter = await MongoRateLimiter.create(client.db(), clock);
    return {
      limiter,
      dispose: async () => {
        await client.db().collection(RATE_LIMITS_COLLECTION).deleteMany({ _id: { $regex: '^test:' } } as never);
        await client.close();
      },
    };
  });
});
