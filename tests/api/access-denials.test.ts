import { expect } from 'chai';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

describe('access denials: recorded up to a bound per member and minute, the rest counted', () => {
  const BOUND = 5;
  let clock: ManualClock;
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let another: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const forbidden = (account: Account) => server.request('GET', '/api/v1/org/audit-logs', { headers: as(account) });
  const auditLog = async (query: string) => {
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    return (await server.request('GET', `/api/v1/org/audit-logs?limit=1000&${query}`, { headers: as(owner) })).json.items;
  };

  before(async () => {
    clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
    server = await startTestServer({ SCRYPT_LOG_N: '12', ACCESS_DENIALS_PER_MINUTE: String(BOUND) }, { clock });
    owner = await registerOwner(server, 'bounded');
    member = await joinAs(server, await registerOwner(server, 'bounded-member-home', 'bm@example.com'), owner.tenant_id, 'member');
    another = await joinAs(server, await registerOwner(server, 'bounded-another-home', 'ba@example.com'), owner.tenant_id, 'member');
  });
  after(() => server.close());

  it(`records ${BOUND} denials of a member in a minute, counts the next 10, and records the count once the minute is over`, async () => {
    const written: string[][] = [];
    for (let index = 0; index < BOUND + 10; index += 1) {
      const response = await forbidden(member);
      expect(response.status).to.equal(403);
      written.push(await response.events());
    }
    expect(written.slice(0, BOUND)).to.deep.equal(Array.from({ length: BOUND }, () => ['AccessDenied@accessDenial']));
    expect(written.slice(BOUND)).to.deep.equal(Array.from({ length: 10 }, () => []));
    expect(await auditLog(`actor_id=${member.user_id}&action=AccessDenialsSuppressed`)).to.deep.equal([]);

    clock.advance(60_000);
    expect((await forbidden(member)).status).to.equal(403);
    const [suppressed, ...more] = await auditLog(`actor_id=${member.user_id}&action=AccessDenialsSuppressed`);
    expect(more).to.deep.equal([]);
    expect(suppressed).to.deep.include({ actor_kind: 'user', tenant_id: owner.tenant_id, resource_type: 'accessDenial' });
    expect(suppressed.details).to.deep.equal({ count: 10, window_start: '2026-11-22T10:00:00.000Z', window_end: '2026-11-22T10:01:00.000Z' });
    const denied = await auditLog(`actor_id=${member.user_id}&action=AccessDenied`);
    expect(denied).to.have.length(BOUND + 1);
    expect(denied[0].details).to.deep.equal({ method: 'GET', path: '/api/v1/org/audit-logs', code: 'insufficient_role' });
  });

  it('keeps each member’s budget, shared by concurrent requests, and records a count at the minute’s sweep when the member stops asking', async () => {
    // All at once: concurrent requests of one member share one budget.
    const responses = await Promise.all(Array.from({ length: BOUND + 2 }, () => forbidden(another)));
    expect(responses.map((response) => response.status)).to.deep.equal(responses.map(() => 403));
    const written = await Promise.all(responses.map((response) => response.events()));
    expect(written.filter((events) => events.length > 0)).to.deep.equal(Array.from({ length: BOUND }, () => ['AccessDenied@accessDenial']));
    clock.advance(60_000);
    await server.platform.accessDenials.recordClosedWindows();
    const counted = await auditLog(`actor_id=${another.user_id}&action=AccessDenialsSuppressed`);
    expect(counted.map((entry: { details: unknown }) => entry.details)).to.deep.equal([{ count: 2, window_start: '2026-11-22T10:01:00.000Z', window_end: '2026-11-22T10:02:00.000Z' }]);
    // The member's one denial of that minute was within the bound: no count for them.
    expect(await auditLog(`actor_id=${member.user_id}&action=AccessDenialsSuppressed`)).to.have.length(1);
  });
});
