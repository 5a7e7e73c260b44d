// The RateLimiter contract, run against every adapter with a clock the test moves. Keys are
// unique per test so that it passes on a shared database.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { RateLimiter } from '../../application/ports/rate-limiter';
import { ManualClock } from '../support/stores';

export interface RateLimiterFixture {
  limiter: RateLimiter;
  dispose(): Promise<void>;
}

export function rateLimiterContract(createFixture: (clock: ManualClock) => Promise<RateLimiterFixture>): void {
  let clock: ManualClock;
  let fixture: RateLimiterFixture;
  let key: string;
  const budget = { limit: 3, windowSeconds: 60 };

  beforeEach(async () => {
    clock = new ManualClock();
    fixture = await createFixture(clock);
    key = `test:${randomUUID()}`;
  });
  afterEach(() => fixture.dispose());

  const attempt = (on = key) => fixture.limiter.consume(on, budget);

  it('allows `limit` attempts, then refuses with the seconds until the next one', async () => {
    for (let index = 0; index < 3; index += 1) expect(await attempt()).to.deep.equal({ allowed: true, retryAfterSeconds: 0 });
    expect(await attempt()).to.deep.equal({ allowed: false, retryAfterSeconds: 20 });
    clock.advance(5_000);
    expect(await attempt()).to.deep.equal({ allowed: false, retryAfterSeconds: 15 });
  });

  it('refills evenly over the window, and never above the limit', async () => {
    for (let index = 0; index < 3; index += 1) await attempt();
    clock.advance(20_000);
    expect((await attempt()).allowed).to.equal(true);
    expect((await attempt()).allowed).to.equal(false);
    clock.advance(10 * 60_000);
    const afterLongIdle = [];
    for (let index = 0; index < 4; index += 1) afterLongIdle.push((await attempt()).allowed);
    expect(afterLongIdle).to.deep.equal([true, true, true, false]);
  });

  it('keeps each key to its own budget', async () => {
    const other = `${key}:other`;
    for (let index = 0; index < 3; index += 1) await attempt();
    expect((await attempt()).allowed).to.equal(false);
    expect((await attempt(other)).allowed).to.equal(true);
  });

  it('checks without taking: the answer consume would give, and the budget untouched', async () => {
    expect(await fixture.limiter.check(key, budget)).to.deep.equal({ allowed: true, retryAfterSeconds: 0 });
    for (let index = 0; index < 5; index += 1) await fixture.limiter.check(key, budget);
    for (let index = 0; index < 3; index += 1) expect((await attempt()).allowed).to.equal(true);
    expect(await fixture.limiter.check(key, budget)).to.deep.equal({ allowed: false, retryAfterSeconds: 20 });
    clock.advance(5_000);
    expect(await fixture.limiter.check(key, budget)).to.deep.equal({ allowed: false, retryAfterSeconds: 15 });
    clock.advance(15_000);
    expect(await fixture.limiter.check(key, budget)).to.deep.equal({ allowed: true, retryAfterSeconds: 0 });
    expect((await attempt()).allowed).to.equal(true);
    expect((await attempt()).allowed).to.equal(false);
  });

  it('lets exactly `limit` of many simultaneous attempts through', async () => {
    const decisions = await Promise.all(Array.from({ length: 12 }, () => attempt()));
    expect(decisions.filter((decision) => decision.allowed)).to.have.length(3);
  });
}
