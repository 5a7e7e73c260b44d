// The emit budget (docs/orchestration-events.md "The emit budget"): an organization may send
// ORCHESTRATION_EMITS_PER_MINUTE events a minute, emit and ingest together; past it 429
// `rate_limited` with Retry-After, nothing written. Another organization's budget is its own;
// replays are not counted; the budget refills with time. Time is a ManualClock.

import { expect } from 'chai';
import { type Account, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const PER_MINUTE = 3;
/** One event's worth of the bucket refills in a minute's share. */
const REFILL_MS = 60_000 / PER_MINUTE;

describe('orchestration events: the emit budget', () => {
  let server: TestServer;
  const clock = new ManualClock();
  let owner: Account;
  let other: Account;

  const send = (account: Account, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> =>
    server.request(method, path, { headers: { authorization: `Bearer ${account.token}`, ...headers }, body });
  const emit = (account: Account, orderId: string, headers: Record<string, string> = {}) =>
    send(account, 'POST', '/api/v1/org/events', { name: 'shop.order.created', payload: { order_id: orderId } }, headers);
  const ingest = (account: Account, tenantId: string, orderId: string) =>
    send(account, 'POST', `/api/v1/org/events/ingest/${tenantId}`, { name: 'shop.order.created', payload: { order_id: orderId } });
  const listed = async (account: Account): Promise<number> => ((await send(account, 'GET', '/api/v1/org/events?limit=100')).json.items as unknown[]).length;

  async function expectOverBudget(response: TestResponse): Promise<void> {
    expect(response.status, response.text).to.equal(429);
    expect(response.json.code).to.equal('rate_limited');
    expect(response.json.message).to.match(new RegExp(`more than ${PER_MINUTE} events a minute; try again in \\d+ s`));
    expect(Number(response.headers.get('retry-after'))).to.be.within(1, REFILL_MS / 1000);
    // Nothing of the event (an Idempotency-Key's claim is released, as for any refusal).
    expect((await response.events()).filter((event) => !event.endsWith('@idempotencyKey'))).to.deep.equal([]);
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', ORCHESTRATION_EMITS_PER_MINUTE: String(PER_MINUTE) }, { clock, orchestrationDispatcher: false });
    owner = await registerOwner(server, 'emit-budget-org');
    other = await registerOwner(server, 'emit-budget-other');
  });
  after(() => server.close());

  it('takes emits and ingests from one budget a minute; past it 429 rate_limited with Retry-After, nothing queued', async () => {
    expect((await emit(owner, 'o-1')).status).to.equal(201);
    expect((await ingest(owner, owner.tenant_id, 'o-2')).status).to.equal(201);
    const first = (await emit(owner, 'o-3')).json as { id: string };

    await expectOverBudget(await emit(owner, 'o-4'));
    await expectOverBudget(await ingest(owner, owner.tenant_id, 'o-4'));
    expect(await listed(owner)).to.equal(3);

    // A person's replay is not a producer's event: outside the budget.
    const replay = await send(owner, 'POST', `/api/v1/org/events/${first.id}/replay`, {});
    expect(replay.status, replay.text).to.equal(201);
    expect(await listed(owner)).to.equal(4);
  });

  it("keeps each organization's budget apart", async () => {
    for (const orderId of ['x-1', 'x-2', 'x-3']) expect((await emit(other, orderId)).status).to.equal(201);
    await expectOverBudget(await emit(other, 'x-4'));
  });

  it('refills with time: one event per minute share, then 429 again', async () => {
    clock.advance(REFILL_MS);
    expect((await emit(owner, 'o-5')).status).to.equal(201);
    await expectOverBudget(await emit(owner, 'o-6'));
  });

  it('refuses an ingest for another tenant before the budget, and frees an Idempotency-Key refused for it', async () => {
    clock.advance(REFILL_MS);
    const mismatch = await ingest(owner, other.tenant_id, 'o-7');
    expect(mismatch.status, mismatch.text).to.equal(403);
    expect(mismatch.json.code).to.equal('tenant_mismatch');
    // The 403 took nothing: the one event refilled is still there.
    expect((await emit(owner, 'o-7', { 'idempotency-key': 'order-o-8' })).status).to.equal(201);

    await expectOverBudget(await emit(owner, 'o-8', { 'idempotency-key': 'order-o-9' }));
    clock.advance(REFILL_MS);
    // The refused request's key was not kept: the same key is sent again and goes through.
    const again = await emit(owner, 'o-8', { 'idempotency-key': 'order-o-9' });
    expect(again.status, again.text).to.equal(201);
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
  });
});
