import { expect } from 'chai';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('audit log (/api/v1/org/audit-logs)', () => {
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let other: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'ledger');
    member = await joinAs(server, await registerOwner(server, 'ledger-member-home', 'lm@example.com'), owner.tenant_id, 'member');
    other = await registerOwner(server, 'elsewhere');
    // A scenario: settings, a role change, a denial, and a workspace.
    await gql(server, 'mutation { update_settings(input: { timezone: "Europe/Paris" }) { timezone } }', {}, owner.token);
    await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'admin' } });
    await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'member' } });
    await server.request('GET', '/api/v1/org/audit-logs', { headers: as(member) });
    await gql(server, 'mutation { create_workspace(name: "Sales") { id } }', {}, owner.token);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
  });
  after(() => server.close());

  it('holds every write of the tenant, newest first, with actor, ip and request id', async () => {
    const response = await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(owner) });
    expect(response.status).to.equal(200);
    const actions = response.json.items.map((entry: { action: string }) => entry.action);
    expect(actions[0]).to.equal('WorkspaceCreated');
    for (const expected of ['ReservationClaimed', 'TenantCreated', 'UserRegistered', 'MemberJoined', 'WorkspaceCreated', 'WidgetTokenRotated', 'OtpIssued', 'EmailQueued', 'EmailVerified', 'SessionStarted', 'TenantSettingsChanged', 'MemberRoleChanged', 'AccessDenied']) {
      expect(actions, expected).to.include(expected);
    }
    const roleChange = response.json.items.find((entry: { action: string }) => entry.action === 'MemberRoleChanged');
    expect(roleChange).to.deep.include({ actor_kind: 'user', actor_id: owner.user_id, resource_type: 'membership', resource_id: owner.tenant_id, ip: '127.0.0.1' });
    expect(roleChange.request_id).to.be.a('string');
    const seqs = response.json.items.map((entry: { seq: number }) => entry.seq);
    expect(seqs).to.deep.equal([...seqs].sort((a: number, b: number) => b - a));
  });

  it('holds none of another tenant’s entries', async () => {
    const mine = await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(owner) });
    const theirs = await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(other) });
    const ids = new Set(mine.json.items.map((entry: { id: string }) => entry.id));
    expect(theirs.json.items.some((entry: { id: string }) => ids.has(entry.id))).to.equal(false);
    expect(theirs.json.items.every((entry: { tenant_id: string }) => entry.tenant_id === other.tenant_id)).to.equal(true);
  });

  it('filters by actor, action, resource and time, and pages with a cursor', async () => {
    const byAction = await server.request('GET', '/api/v1/org/audit-logs?action=AccessDenied', { headers: as(owner) });
    expect(byAction.json.items).to.have.length(1);
    expect(byAction.json.items[0]).to.deep.include({ actor_id: member.user_id, resource_type: 'accessDenial' });
    const byActor = await server.request('GET', `/api/v1/org/audit-logs?actor_id=${member.user_id}&limit=1000`, { headers: as(owner) });
    expect(byActor.json.items.every((entry: { actor_id: string }) => entry.actor_id === member.user_id)).to.equal(true);
    const byResource = await server.request('GET', `/api/v1/org/audit-logs?resource_type=tenant&resource_id=${owner.tenant_id}`, { headers: as(owner) });
    expect(byResource.json.items.map((entry: { action: string }) => entry.action)).to.include.members(['TenantCreated', 'TenantSettingsChanged']);
    const future = await server.request('GET', '/api/v1/org/audit-logs?from=2999-01-01T00:00:00Z', { headers: as(owner) });
    expect(future.json.items).to.deep.equal([]);
    const first = await server.request('GET', '/api/v1/org/audit-logs?limit=3', { headers: as(owner) });
    const second = await server.request('GET', `/api/v1/org/audit-logs?limit=3&cursor=${first.json.next_cursor}`, { headers: as(owner) });
    expect(second.json.items[0].seq).to.equal(first.json.items[2].seq - 1);
  });

  it('answers 400 per bad filter, 403 for a member and 401 without a user token', async () => {
    expect((await server.request('GET', '/api/v1/org/audit-logs?from=yesterday', { headers: as(owner) })).json).to.deep.include({ code: 'invalid_request', field: 'from' });
    expect((await server.request('GET', '/api/v1/org/audit-logs?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', { headers: as(owner) })).status).to.equal(400);
    expect((await server.request('GET', '/api/v1/org/audit-logs?limit=5000', { headers: as(owner) })).json.field).to.equal('limit');
    expect((await server.request('GET', '/api/v1/org/audit-logs', { headers: as(member) })).status).to.equal(403);
    expect((await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(member) })).status).to.equal(403);
    expect((await server.request('GET', '/api/v1/org/audit-logs/export', { headers: as(member) })).status).to.equal(403);
    expect((await server.request('GET', '/api/v1/org/audit-logs')).status).to.equal(401);
    expect((await server.request('GET', '/api/v1/org/audit-logs', { headers: { authorization: 'Bearer wt_widget' } })).status).to.equal(401);
  });

  it('exports NDJSON, oldest first', async () => {
    const response = await server.request('GET', '/api/v1/org/audit-logs/export', { headers: as(owner) });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    const lines = response.text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines[0].seq).to.equal(1);
    expect(lines[0].action).to.equal('ReservationClaimed');
    expect(lines.map((entry) => entry.seq)).to.deep.equal(lines.map((_, index) => index + 1));
  });

  it('verifies the hash chain, and reports the first break after an entry is altered', async () => {
    const intact = await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(intact.json).to.deep.include({ ok: true, first_break: null });
    expect(intact.json.entries_checked).to.be.greaterThan(10);
    const entries = server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG);
    const victim = (await entries.find({ where: { tenant_id: owner.tenant_id, seq: 5 } })).items[0];
    await entries.put({ ...victim, actor_id: 'someone-else' });
    const broken = await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(broken.json).to.deep.equal({ ok: false, entries_checked: 5, first_break: { id: victim.id, seq: 5, reason: 'hash_mismatch' } });
    await entries.put(victim);
    expect((await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) })).json.ok).to.equal(true);
  });
});
