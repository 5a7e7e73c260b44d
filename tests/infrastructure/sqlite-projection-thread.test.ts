// The projection thread of the embedded store (infrastructure/sqlite/projection-thread.ts): the
// audit log is built on a thread of its own, into the projection file, and what a request
// writes is in it when the answer comes; PROJECTION_THREAD=main builds the same file on the
// serving thread; a data folder of an earlier release, with the audit log in platform.db, has
// it moved (built again from the events); a thread that dies is started again.

import { expect } from 'chai';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { silentLogger } from '../../application/ports/logger';
import type { ProjectionProgress } from '../../projections/runner';
import { PROJECTION_FILE, SQLITE_FILE } from '../../infrastructure/composition-root';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { derivedDataSynchronous, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { ProjectionThread } from '../../infrastructure/sqlite/projection-thread';
import { temporaryDirectory } from '../support/files';
import { registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { expectEveryEventAudited } from '../support/audit';
import { eventually } from '../support/stores';

const settings = { SCRYPT_LOG_N: '12' };

/** The tables of a file of the data folder. */
function tablesOf(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => row.name);
  } finally {
    db.close();
  }
}

async function auditedActions(server: TestServer, token: string): Promise<string[]> {
  const response = await server.request('GET', '/api/v1/org/audit-logs?limit=100', { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).to.equal(200);
  return response.json.items.map((entry: { action: string }) => entry.action);
}

describe('projection thread of the embedded store', () => {
  describe('PROJECTION_THREAD=worker (the default)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer(settings);
    });
    after(async () => server.close());

    it('builds the audit log on its own thread, into the projection file, and a write is in it when its answer comes', async () => {
      const owner = await registerOwner(server, 'thread-org');
      // The registration's answer waited for every read model, the thread's included: no polling here.
      expect(await auditedActions(server, owner.token)).to.include.members(['TenantCreated', 'MemberJoined']);
      const created = await server.request('POST', '/api/v1/org/teams', { headers: { authorization: `Bearer ${owner.token}` }, body: { name: 'Night shift' } });
      expect(created.status).to.equal(201);
      expect((await auditedActions(server, owner.token))[0]).to.equal('TeamCreated');

      const dir = server.platform.config.dataDir;
      expect(tablesOf(path.join(dir, PROJECTION_FILE))).to.include.members(['rm_audit_log', 'rm_orchestration_events']);
      expect(tablesOf(path.join(dir, SQLITE_FILE))).to.not.include.members(['rm_audit_log']);
      expect(tablesOf(path.join(dir, SQLITE_FILE))).to.not.include.members(['rm_orchestration_events']);
      await expectEveryEventAudited(server);
    });

    it('reports the audit log and the orchestration events as run by the thread, under a holder id of its own, caught up', async () => {
      const onThread = ['audit_log', 'orchestration_events'];
      const head = await server.platform.eventStore.headPosition();
      await eventually(async () => (await server.platform.projections.status()).filter((report) => onThread.includes(report.name)).every((report) => report.checkpoint >= head));
      for (const report of (await server.platform.projections.status()).filter((candidate) => onThread.includes(candidate.name))) {
        expect(report, report.name).to.deep.include({ status: 'running', holder: `${server.platform.projections.holder}/projection-thread`, error: null });
      }
      const others = (await server.platform.projections.status()).filter((candidate) => !onThread.includes(candidate.name));
      expect(others.every((candidate) => candidate.holder === server.platform.projections.holder)).to.equal(true);
    });

    it('rebuilds the audit log on the thread when asked in the serving process', async () => {
      const result = await server.platform.projections.rebuild('audit_log');
      expect(result.events).to.be.greaterThan(0);
      expect(result.checkpoint).to.be.at.least(await server.platform.eventStore.headPosition());
      await expectEveryEventAudited(server);
    });
  });

  it("runs the audit anchoring on the thread too: the serving thread appends the checkpoints it signs, its cursor is in the projection file", async () => {
    const server = await startTestServer({ ...settings, AUDIT_CHECKPOINT_ENTRIES: '5' }, { auditAnchoringPollMs: 3_600_000 });
    try {
      const owner = await registerOwner(server, 'anchored-org');
      await server.platform.auditAnchoring.runOnce();
      const checkpoints = await server.platform.eventStore.readStream(`auditCheckpoint-${owner.tenant_id}`);
      expect(checkpoints.length).to.be.greaterThan(0);
      expect(checkpoints.every((event) => event.type === 'AuditCheckpointRecorded' && event.metadata.actor.id === 'audit_anchoring')).to.equal(true);
      const verified = await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: { authorization: `Bearer ${owner.token}` } });
      expect(verified.json).to.deep.include({ ok: true, checkpoints_checked: checkpoints.length });
      const stateIn = (file: string): number => {
        const db = new Database(path.join(server.platform.config.dataDir, file), { readonly: true });
        try {
          return (db.prepare("SELECT count(*) AS n FROM _projections WHERE name = 'audit_anchoring'").get() as { n: number }).n;
        } finally {
          db.close();
        }
      };
      expect(stateIn(PROJECTION_FILE)).to.equal(1);
      expect(stateIn(SQLITE_FILE)).to.equal(0);
    } finally {
      await server.close();
    }
  });

  it('PROJECTION_THREAD=main builds the same file on the serving thread', async () => {
    const server = await startTestServer({ ...settings, PROJECTION_THREAD: 'main' });
    try {
      const owner = await registerOwner(server, 'main-thread-org');
      expect(await auditedActions(server, owner.token)).to.include('TenantCreated');
      const report = (await server.platform.projections.status()).find((candidate) => candidate.name === 'audit_log')!;
      expect(report.holder).to.equal(server.platform.projections.holder);
      expect(tablesOf(path.join(server.platform.config.dataDir, PROJECTION_FILE))).to.include('rm_audit_log');
    } finally {
      await server.close();
    }
  });

  it('moves an audit log an earlier release kept in platform.db: dropped there, built again from the events in the projection file', async () => {
    // A folder of the test's own: a test server removes the folder it made when it closes.
    const folder = temporaryDirectory();
    const dir = folder.path;
    const first = await startTestServer({ ...settings, DATA_DIR: dir });
    const owner = await registerOwner(first, 'moved-org');
    const before = await auditedActions(first, owner.token);
    await first.close();
    // The earlier layout: the audit log's table and state in platform.db, no projection file.
    fs.rmSync(path.join(dir, PROJECTION_FILE), { force: true });
    fs.rmSync(path.join(dir, `${PROJECTION_FILE}-wal`), { force: true });
    fs.rmSync(path.join(dir, `${PROJECTION_FILE}-shm`), { force: true });
    const db = openSqliteDatabase(path.join(dir, SQLITE_FILE));
    const old = new SqliteReadStore(db);
    await old.ensureCollection({ name: 'audit_log', indexes: [{ field: 'tenant_id' }] });
    await old.commitProjection({ projection: 'audit_log', expectedCheckpoint: 0, operations: [{ kind: 'put', collection: 'audit_log', doc: { id: 'stale', tenant_id: owner.tenant_id } }], state: { name: 'audit_log', version: 1, checkpoint: 999_999, status: 'running', error: null, updated_at: new Date().toISOString() } });
    await old.close();
    db.close();

    const second = await startTestServer({ ...settings, DATA_DIR: dir });
    try {
      expect(tablesOf(path.join(dir, SQLITE_FILE))).to.not.include('rm_audit_log');
      const head = await second.platform.eventStore.headPosition();
      expect(await second.platform.readYourWrites(head, ['audit_log'])).to.equal(true);
      const after = await auditedActions(second, owner.token);
      expect(after).to.deep.equal(before);
      await expectEveryEventAudited(second);
    } finally {
      await second.close();
      folder.remove();
    }
  });

  it('syncs the projection file at most as NORMAL: derived data, set back with its checkpoints on a power cut', () => {
    expect(['full', 'normal', 'off'].map((level) => derivedDataSynchronous(level as 'full' | 'normal' | 'off'))).to.deep.equal(['normal', 'normal', 'off']);
  });

  it('starts a thread that exits again, reporting its projections failed meanwhile, until stopped', async () => {
    const dir = temporaryDirectory();
    const script = path.join(dir.path, 'exits.js');
    fs.writeFileSync(script, 'process.exit(3);\n');
    const reports: ProjectionProgress[][] = [];
    const thread = await ProjectionThread.start({
      data: { eventsFile: '', readModelsFile: '', synchronous: 'normal', projections: ['audit_log'], leaseHolder: 'h', leaseTtlMs: 1000, readCacheTtlMs: 0, logLevel: 'silent', dataKey: new Uint8Array(32), anchoring: null },
      logger: silentLogger,
      onProgress: (progress) => reports.push(progress),
      workerScript: script,
    });
    try {
      await eventually(() => reports.length >= 2, 5000, 'a second start that exits too');
      expect(reports[0]).to.deep.equal([{ name: 'audit_log', checkpoint: 0, status: 'failed', error: 'the projection thread exited (code 3); starting it again', stuck: false }]);
    } finally {
      await thread.stop();
      dir.remove();
    }
    const seen = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(reports.length, 'no start after stop').to.equal(seen);
  });
});
