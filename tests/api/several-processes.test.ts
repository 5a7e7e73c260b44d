// Two platforms on one data folder, as two server processes behind a balancer: the first
// holds every projection's lease, the second stands by, yet it is ready and its clients
// read their own writes (through the holder's projections). When the first stops, the
// second takes over. (tests/e2e/several-processes.test.ts runs real child processes.)

import { expect } from 'chai';
import { LOGIN, PASSWORD, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { PROJECTION_FILE_PROJECTIONS } from '../../infrastructure/composition-root';

describe('a second server process on the same embedded store', () => {
  let holder: TestServer;
  let standby: TestServer;
  const settings = { SCRYPT_LOG_N: '12', LEASE_TTL_MS: '600' };
  // The projection file's read models are built on each process's projection thread, under a holder id of its own.
  const holderOf = (server: TestServer, projection: string): string =>
    PROJECTION_FILE_PROJECTIONS.includes(projection) ? `${server.platform.projections.holder}/projection-thread` : server.platform.projections.holder;
  const allStatus = async (server: TestServer, status: string): Promise<boolean> => (await server.platform.projections.status()).every((report) => report.status === status);

  before(async () => {
    holder = await startTestServer(settings);
    await eventually(() => allStatus(holder, 'running'), 5000, 'the first process running every projection');
    standby = await startTestServer({ ...settings, DATA_DIR: holder.platform.config.dataDir });
  });
  after(async () => {
    await standby.close();
    await holder.close();
  });

  it('is ready, with every projection on standby behind the holder', async () => {
    const response = await standby.request('GET', '/ready');
    expect(response.status).to.equal(200);
    for (const projection of response.json.projections) {
      expect(projection, projection.name).to.deep.include({ status: 'standby', holder: holderOf(holder, projection.name), ok: true });
    }
  });

  it('reads its own writes: a registration, a team it creates, a session it revokes', async () => {
    const owner = await registerOwner(standby, 'standby-org');
    const auth = { authorization: `Bearer ${owner.token}` };
    const created = await standby.request('POST', '/api/v1/org/teams', { headers: auth, body: { name: 'Night shift' } });
    expect(created.status).to.equal(201);
    const team = await standby.request('GET', `/api/v1/org/teams/${created.json.id}`, { headers: auth });
    expect(team.status).to.equal(200);
    expect(team.json.name).to.equal('Night shift');

    const second = (await gql(standby, LOGIN, { email: owner.email, password: PASSWORD })).json.data.login.token as string;
    // Read (and cache) both sessions in this process, then revoke one: the next request with it is refused.
    expect((await standby.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${second}` } })).status).to.equal(200);
    const listed = await standby.request('GET', '/api/v1/me/sessions', { headers: auth });
    const other = listed.json.items.find((session: { current: boolean }) => !session.current);
    expect((await standby.request('DELETE', `/api/v1/me/sessions/${other.jti}`, { headers: auth })).status).to.equal(204);
    const refused = await standby.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${second}` } });
    expect(refused.status).to.equal(401);
    expect(refused.json.code).to.equal('session_revoked');
    expect(await allStatus(standby, 'standby'), 'the second process applied nothing itself').to.equal(true);
  });

  it('takes every projection over when the holder stops', async () => {
    await holder.platform.close();
    await eventually(() => allStatus(standby, 'running'), 10_000, 'the second process running every projection');
    const owner = await registerOwner(standby, 'after-handover');
    const created = await standby.request('POST', '/api/v1/org/teams', { headers: { authorization: `Bearer ${owner.token}` }, body: { name: 'Day shift' } });
    expect((await standby.request('GET', `/api/v1/org/teams/${created.json.id}`, { headers: { authorization: `Bearer ${owner.token}` } })).status).to.equal(200);
    const ready = await standby.request('GET', '/ready');
    expect(ready.status).to.equal(200);
    for (const projection of ready.json.projections) expect(projection.holder, projection.name).to.equal(holderOf(standby, projection.name));
  });
});
