import { createHash, sign } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { type AuditCheckpointStatement, auditCheckpointSigningText, auditCheckpointStream } from '../../domain/audit-checkpoint/audit-checkpoint';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { verifyExportOffline } from '../support/audit-export';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { generateEd25519KeyPair } from '../../infrastructure/crypto/keys';

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

  it('exports NDJSON: entries oldest first with their chain fields, then the signing key', async () => {
    const response = await server.request('GET', '/api/v1/org/audit-logs/export', { headers: as(owner) });
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    const lines = response.text.trim().split('\n').map((line) => JSON.parse(line));
    const entries = lines.filter((line) => line.record === 'entry');
    expect(entries[0]).to.deep.include({ seq: 1, action: 'RegistrationStarted', prev_hash: '0'.repeat(64) });
    expect(entries[0]).to.have.all.keys(
      'record', 'id', 'tenant_id', 'actor_kind', 'actor_id', 'subject_kind', 'subject_id', 'action', 'resource_type', 'resource_id', 'occurred_at', 'ip',
      'request_id', 'correlation_id', 'position', 'data_hash', 'seq', 'prev_hash', 'hash', 'details',
    );
    expect(entries[0]).to.deep.include({ subject_kind: null, subject_id: null });
    expect(entries[0].hash).to.match(/^[0-9a-f]{64}$/);
    expect(entries[0].data_hash).to.match(/^[0-9a-f]{64}$/);
    expect(entries.map((entry) => entry.seq)).to.deep.equal(entries.map((_, index) => index + 1));
    expect(lines.at(-1)).to.deep.equal({ record: 'signing_key', ...server.platform.auditSigner.publicKey() });
  });

  it('verifies the hash chain, and reports the first break after an entry is altered', async () => {
    const intact = await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(intact.json).to.deep.include({ ok: true, first_break: null });
    expect(intact.json.entries_checked).to.be.greaterThan(10);
    const entries = server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG);
    const victim = (await entries.find({ where: { tenant_id: owner.tenant_id, seq: 5 } })).items[0];
    await entries.put({ ...victim, actor_id: 'someone-else' });
    const broken = await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(broken.json).to.deep.equal({ ok: false, entries_checked: 5, checkpoints_checked: 0, anchored_through_seq: 0, first_break: { id: victim.id, seq: 5, reason: 'hash_mismatch' } });
    await entries.put(victim);
    expect((await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) })).json.ok).to.equal(true);
  });
});

/** Sorted keys at every level, written here again so the export's definition is checked, not restated. */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${sortedJson(record[key])}`)
    .join(',')}}`;
}


describe('audit log anchored in the event log (signed checkpoints)', () => {
  const EVERY = 5;
  let server: TestServer;
  let owner: Account;
  let member: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const verifyAs = async (account: Account) => (await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(account) })).json;
  const caughtUp = async () => {
    await server.platform.auditAnchoring.runOnce();
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
  };
  const entryAt = async (tenantId: string, seq: number) =>
    (await server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id: tenantId, seq } })).items[0];
  const checkpointsOf = async (tenantId: string) => server.platform.eventStore.readStream(auditCheckpointStream(tenantId));

  before(async () => {
    // The anchoring runs when the test says so (runOnce), not on a timer.
    server = await startTestServer({ SCRYPT_LOG_N: '12', AUDIT_CHECKPOINT_ENTRIES: String(EVERY) }, { auditAnchoringPollMs: 3_600_000 });
    owner = await registerOwner(server, 'anchored');
    member = await joinAs(server, await registerOwner(server, 'anchored-member-home', 'am@example.com'), owner.tenant_id, 'member');
    await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'admin' } });
    await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'member' } });
    await gql(server, 'mutation { create_workspace(name: "Ledger") { id } }', {}, owner.token);
    await caughtUp();
  });
  after(() => server.close());

  it('records a signed checkpoint every N entries of a tenant, recomputed from the events, each once', async () => {
    const recorded = await checkpointsOf(owner.tenant_id);
    const total = (await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(owner) })).json.items.length;
    expect(recorded.map((event) => (event.data as AuditCheckpointStatement).seq)).to.deep.equal(Array.from({ length: Math.floor(total / EVERY) }, (_, index) => (index + 1) * EVERY));
    for (const event of recorded) {
      const checkpoint = event.data as AuditCheckpointStatement & { signature: string };
      const entry = await entryAt(owner.tenant_id, checkpoint.seq);
      expect(event.type).to.equal('AuditCheckpointRecorded');
      expect(checkpoint).to.deep.include({ tenant_id: owner.tenant_id, chain_head_hash: entry.hash, position: entry.position, entries: EVERY, key_id: server.platform.auditSigner.keyId });
      expect(server.platform.auditSigner.verify(Buffer.from(auditCheckpointSigningText(checkpoint)), checkpoint.signature, checkpoint.key_id)).to.equal(true);
    }
    await server.platform.auditAnchoring.runOnce();
    expect(await checkpointsOf(owner.tenant_id)).to.have.length(recorded.length);
  });

  it('keeps checkpoints out of the chain they anchor', async () => {
    const listed = await server.request('GET', '/api/v1/org/audit-logs?action=AuditCheckpointRecorded', { headers: as(owner) });
    expect(listed.json.items).to.deep.equal([]);
    expect((await server.request('GET', '/api/v1/org/audit-logs?resource_type=auditCheckpoint', { headers: as(owner) })).json.items).to.deep.equal([]);
  });

  it('verifies an untouched log against its checkpoints', async () => {
    const anchored = (await checkpointsOf(owner.tenant_id)).length;
    const result = await verifyAs(owner);
    expect(result).to.deep.include({ ok: true, first_break: null, checkpoints_checked: anchored, anchored_through_seq: anchored * EVERY });
    expect(result.entries_checked).to.be.at.least(anchored * EVERY);
  });

  it('exports what an offline verifier needs: entries with their chain, the checkpoints, the public key', async () => {
    const response = await server.request('GET', '/api/v1/org/audit-logs/export', { headers: as(owner) });
    const lines = response.text.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.record)).to.deep.equal([...lines.filter((line) => line.record === 'entry').map(() => 'entry'), ...lines.filter((line) => line.record === 'checkpoint').map(() => 'checkpoint'), 'signing_key']);
    expect(verifyExportOffline(lines)).to.equal((await checkpointsOf(owner.tenant_id)).length).and.be.greaterThan(0);
    // data_hash is the event's data as recorded, keys sorted: checkable by anyone holding the event.
    const entry = lines.find((line) => line.action === 'MemberRoleChanged');
    const [event] = (await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['MemberRoleChanged'] } })).filter((recorded) => recorded.id === entry.id);
    expect(entry.data_hash).to.equal(createHash('sha256').update(sortedJson(event.data)).digest('hex'));
  });

  it('reports a checkpoint not signed with the platform key', async () => {
    const forger = await registerOwner(server, 'forger');
    await caughtUp();
    const first = await entryAt(forger.tenant_id, 1);
    const { publicKey: _theirs, privateKey } = generateEd25519KeyPair();
    // A true statement (the real hash of entry 1), signed by someone else under our key id.
    const statement: AuditCheckpointStatement = { tenant_id: forger.tenant_id, seq: 1, chain_head_hash: first.hash, position: first.position, entries: 1, anchored_at: new Date().toISOString(), key_id: server.platform.auditSigner.keyId };
    const signature = sign(null, Buffer.from(auditCheckpointSigningText(statement)), privateKey).toString('base64url');
    const forged = { id: server.platform.ids.newId(), type: 'AuditCheckpointRecorded', data: { ...statement, signature }, metadata: { tenant_id: forger.tenant_id, actor: { kind: 'system' as const, id: 'intruder' }, request_id: null, correlation_id: 'forged', causation_id: null, occurred_at: statement.anchored_at, ip: null } };
    await server.platform.eventStore.appendToStream(auditCheckpointStream(forger.tenant_id), [forged], { expectedRevision: 'any' });
    expect(await verifyAs(forger)).to.deep.equal({
      ok: false,
      entries_checked: 1,
      checkpoints_checked: 0,
      anchored_through_seq: 0,
      first_break: { id: first.id, seq: 1, reason: 'checkpoint_signature_invalid', checkpoint_id: forged.id },
    });
  });

  it('reports anchored entries that the audit log no longer has', async () => {
    const trimmed = await registerOwner(server, 'trimmed');
    await caughtUp();
    const anchored = (await checkpointsOf(trimmed.tenant_id)).map((event) => ({ id: event.id, seq: (event.data as AuditCheckpointStatement).seq }));
    expect(anchored.length).to.be.at.least(2);
    const entries = server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG);
    for (const entry of (await entries.find({ where: { tenant_id: trimmed.tenant_id, seq: { gt: EVERY } }, limit: 1000 })).items) await entries.delete(entry.id);
    expect(await verifyAs(trimmed)).to.deep.equal({
      ok: false,
      entries_checked: EVERY,
      checkpoints_checked: 2,
      anchored_through_seq: EVERY,
      first_break: { id: anchored[1].id, seq: anchored[1].seq, reason: 'checkpoint_beyond_log', checkpoint_id: anchored[1].id },
    });
  });

  it('finds an event rewritten in the store after it was anchored, even once the audit log is rebuilt from it', async () => {
    const before = await verifyAs(owner);
    const entries = server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG);
    const victim = (await entries.find({ where: { tenant_id: owner.tenant_id, action: 'MemberRoleChanged' }, sort: { field: 'seq', direction: 'asc' }, limit: 1 })).items[0];
    expect(victim.seq).to.be.at.most(before.anchored_through_seq);
    // Someone with write access to the database makes the member an owner in the record...
    const db = new Database(path.join(server.platform.config.dataDir, 'platform.db'));
    try {
      expect(db.prepare("UPDATE events SET data = json_set(data, '$.role', 'owner') WHERE event_id = ?").run(victim.id).changes).to.equal(1);
    } finally {
      db.close();
    }
    // ... and rebuilds the audit log, whose chain is then consistent with the rewritten events.
    await server.platform.projections.rebuild('audit_log');
    const rebuilt = await entryAt(owner.tenant_id, victim.seq);
    expect(rebuilt.data_hash).to.not.equal(victim.data_hash);
    const anchoredAt = Math.ceil(victim.seq / EVERY) * EVERY;
    const [checkpoint] = (await checkpointsOf(owner.tenant_id)).filter((event) => (event.data as AuditCheckpointStatement).seq === anchoredAt);
    expect(await verifyAs(owner)).to.deep.equal({
      ok: false,
      entries_checked: anchoredAt,
      checkpoints_checked: anchoredAt / EVERY,
      anchored_through_seq: anchoredAt - EVERY,
      first_break: { id: (await entryAt(owner.tenant_id, anchoredAt)).id, seq: anchoredAt, reason: 'checkpoint_mismatch', checkpoint_id: checkpoint.id, after_seq: anchoredAt - EVERY },
    });
  });
});
