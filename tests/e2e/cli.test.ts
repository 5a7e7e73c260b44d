// The operator CLI as an operator runs it: a separate process on the data folder.

import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import net from 'node:net';
import { claimReservation } from '../../application/reservation/reservations';
import { handleCommand } from '../../application/command-handling/handle-command';
import { documentAggregate } from '../../application/document/documents';
import { systemContext } from '../../application/shared/request-context';
import { type DocumentCommand, documentStream } from '../../domain/document/document';
import { registerOwner } from '../support/identity';
import { userContext } from '../support/context';
import { CLI, cli, cliWith } from '../support/cli';
import { temporaryDirectory } from '../support/files';
import { startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { fail, process as processEvent, signedConnectorClient } from '../support/orchestration';
import { createConnector } from '../../adapters/connector-sdk';
import { subscribeTo } from '../support/subscriptions';

describe('operator CLI', function () {
  this.timeout(30_000);
  const dir = temporaryDirectory();
  let tenantId: string;
  after(() => dir.remove());

  it('creates a tenant and refuses its slug a second time', async () => {
    const created = await cli(dir.path, 'tenants', 'create', '--name', 'Acme Corp', '--slug', 'acme');
    expect(created.code, created.stderr).to.equal(0);
    tenantId = /created tenant (\S+)/.exec(created.stdout)![1];
    const again = await cli(dir.path, 'tenants', 'create', '--name', 'Other', '--slug', 'acme');
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain('tenant_slug_taken');
  });

  it('renames, suspends and lists tenants from the read model', async () => {
    expect((await cli(dir.path, 'tenants', 'rename', tenantId, 'Acme', 'Group')).code).to.equal(0);
    expect((await cli(dir.path, 'tenants', 'suspend', tenantId, '--reason', 'unpaid invoice')).code).to.equal(0);
    const listed = await cli(dir.path, 'tenants', 'list');
    expect(listed.stdout).to.match(new RegExp(`${tenantId}\\s+acme\\s+Acme Group\\s+suspended`));
  });

  it('reads a stream as JSON lines', async () => {
    const read = await cli(dir.path, 'events', 'read', `tenant-${tenantId}`);
    const types = read.stdout.trim().split('\n').map((line) => JSON.parse(line).type);
    expect(types).to.deep.equal(['TenantCreated', 'TenantRenamed', 'TenantSuspended']);
    const last = await cli(dir.path, 'events', 'read', `tenant-${tenantId}`, '--backwards', '--limit', '1');
    expect(JSON.parse(last.stdout).metadata.actor).to.deep.equal({ kind: 'system', id: 'operator-cli' });
  });

  it('tails $all from a position', async () => {
    const tail = await cli(dir.path, 'events', 'tail', '--from', '0', '--limit', '2');
    expect(tail.stdout.trim().split('\n').map((line) => JSON.parse(line).type)).to.deep.equal(['ReservationClaimed', 'TenantCreated']);
  });

  it('lists the plans of the default catalogue and shows a tenant\'s quotas', async () => {
    const plans = await cli(dir.path, 'plans', 'list');
    expect(plans.code, plans.stderr).to.equal(0);
    const codes = plans.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[1]);
    expect(codes).to.deep.equal(['free', 'starter', 'growth', 'premium']);
    expect(plans.stdout).to.match(/premium\s+Premium\s+sellable\s+299\.00 usd\s+2990\.00 usd\s+100000\s+10000\s+100\s+200\s+sdk_connections,whatsapp,handoff,crm/);
    const quotas = await cli(dir.path, 'tenants', 'quotas', tenantId);
    expect(quotas.code, quotas.stderr).to.equal(0);
    expect(quotas.stdout).to.contain(`tenant ${tenantId} on plan free (Free)`);
    expect(quotas.stdout).to.match(/users\s+3\s+-\s+3\s+0/);
    const unknown = await cli(dir.path, 'tenants', 'quotas', 'nobody');
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('tenant_not_found');
  });

  it('shows projection status and rebuilds a projection', async () => {
    const rebuilt = await cli(dir.path, 'projections', 'rebuild', 'tenants');
    expect(rebuilt.code, rebuilt.stderr).to.equal(0);
    expect(rebuilt.stdout).to.match(/rebuilt tenants: 3 events, checkpoint \d+/);
    // One of the projection file's (read-models.db): the CLI builds it on its one thread (PROJECTION_THREAD=main).
    const audit = await cli(dir.path, 'projections', 'rebuild', 'audit_log');
    expect(audit.code, audit.stderr).to.equal(0);
    expect(audit.stdout).to.match(/rebuilt audit_log: [1-9]\d* events, checkpoint \d+/);
    const status = await cli(dir.path, 'projections', 'status');
    expect(status.stdout).to.match(/audit_log\s+\d+\s+(\d+)\s+\1\s+0\s+/);
    expect(status.stdout).to.match(/^projection\s+version\s+checkpoint\s+head\s+lag\s+status/);
    expect(status.stdout).to.match(/tenants\s+2\s+(\d+)\s+\1\s+0\s+/);
    const listed = await cli(dir.path, 'tenants', 'list');
    expect(listed.stdout).to.contain('Acme Group');
  });

  it('answers usage errors with exit code 2', async () => {
    expect((await cli(dir.path, 'projections', 'rebuild', 'nope')).stdout).to.contain('no projection named nope');
    expect((await cli(dir.path, 'frobnicate')).code).to.equal(2);
    expect((await cli(dir.path, 'tenants', 'create', '--name', 'X')).code).to.equal(2);
  });

  it('runs the connector doctor: exit 0 against the example connector, 1 with a wrong secret', async () => {
    const connector = createExampleConnector({ signingSecret: 'doctor-secret-0123456789', otpDelivery: { send: async () => undefined } });
    const listening = await connector.listen(0, '127.0.0.1');
    try {
      const passed = await cli(dir.path, 'connector', 'doctor', listening.url, '--secret', 'doctor-secret-0123456789');
      expect(passed.code, passed.stdout).to.equal(0);
      expect(passed.stdout).to.match(/pass/i);
      const failed = await cli(dir.path, 'connector', 'doctor', listening.url, '--secret', 'another-secret-0123456789');
      expect(failed.code).to.equal(1);
      expect(failed.stdout).to.match(/secret/i);
    } finally {
      await listening.close();
    }
  });

  it('names a bad environment variable', async () => {
    const { code, stderr } = await cliWith({ DATA_DIR: dir.path, SQLITE_SYNCHRONOUS: 'sometimes' }, 'projections', 'status');
    expect(code).to.equal(2);
    expect(stderr).to.contain('SQLITE_SYNCHRONOUS: expected one of full, normal, off, got "sometimes"');
  });

  it('ends quietly when the reader of `events tail` goes away (`| head`)', async () => {
    const tail = spawn(process.execPath, [CLI, 'events', 'tail', '--from', '0'], { env: { ...process.env, DATA_DIR: dir.path, LOG_LEVEL: 'silent' } });
    let stderr = '';
    tail.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => tail.on('exit', (code) => resolve(code)));
    await new Promise((resolve) => tail.stdout.once('data', resolve));
    tail.stdout.destroy();
    // The next event tail prints meets the closed pipe.
    expect((await cli(dir.path, 'tenants', 'create', '--name', 'Piped', '--slug', 'piped-away')).code).to.equal(0);
    expect(await exited).to.equal(0);
    expect(stderr).to.equal('');
  });
});

describe('operator CLI beside a running server', function () {
  this.timeout(30_000);

  it('projections status shows the lag /ready shows, after many events the projections skip (#9.9)', async () => {
    // The clock stands still, so the server stores checkpoints moved only past skipped events once.
    const server = await startTestServer({}, { clock: new ManualClock(new Date()) });
    try {
      for (let index = 0; index < 150; index += 1) await claimReservation(server.platform.commands, 'cli_lag_test', `value-${index}`, `owner-${index}`, userContext());
      const readyLags = async (): Promise<Record<string, number>> =>
        Object.fromEntries((await server.request('GET', '/ready')).json.projections.map((p: { name: string; lag: number }) => [p.name, p.lag]));
      const cliLags = async (): Promise<Record<string, number>> => {
        const status = await cli(server.platform.config.dataDir, 'projections', 'status');
        expect(status.code, status.stderr).to.equal(0);
        return Object.fromEntries(
          status.stdout
            .trim()
            .split('\n')
            .slice(1)
            .map((line) => line.trim().split(/\s+/))
            .filter(([name]) => !name.startsWith('saga:'))
            .map(([name, , , , lag]) => [name, Number(lag)]),
        );
      };
      // Audit anchoring may append an event of its own at any moment: compare only while /ready stays put around the CLI's reading.
      let compared: { cli: Record<string, number>; ready: Record<string, number> } | undefined;
      await eventually(
        async () => {
          const before = await readyLags();
          if (!Object.values(before).every((lag) => lag === 0)) return false;
          const shown = await cliLags();
          const after = await readyLags();
          if (JSON.stringify(before) !== JSON.stringify(after)) return false;
          compared = { cli: shown, ready: after };
          return true;
        },
        15_000,
        'projections caught up and still',
      );
      expect(Object.keys(compared!.ready).length).to.be.greaterThan(3);
      expect(compared!.cli).to.deep.equal(compared!.ready);

      // Every projection runs in the server: the CLI shows it standing by for the server's lease, not stopped.
      const rows = (await cli(server.platform.config.dataDir, 'projections', 'status')).stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.trim().split(/\s+/))
        .filter(([name]) => !name!.startsWith('saga:'));
      expect(rows.map(([name, , , , , status]) => `${name} ${status}`)).to.deep.equal(rows.map(([name]) => `${name} standby`));
      expect(new Set(rows.map((row) => row[6]!.replace(/\/projection-thread$/, '')))).to.deep.equal(new Set([server.platform.projections.holder]));
    } finally {
      await server.close();
    }
  });
});

describe('operator CLI: documents status', function () {
  this.timeout(30_000);

  it('counts documents and their chunks per tenant and indexing status, for one tenant with --tenant', async () => {
    // The outcomes are recorded here by hand, as the indexing saga would: it does not run.
    const server = await startTestServer({ SCRYPT_LOG_N: '12' }, { documentIndexing: false });
    try {
      const owner = await registerOwner(server, 'cli-docs-org');
      const headers = { authorization: `Bearer ${owner.token}` };
      const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers })).json.items[0].id;
      const ids: string[] = [];
      for (const title of ['One', 'Two', 'Three']) {
        ids.push((await server.request('POST', '/api/v1/documents/text', { headers, body: { workspace_id: workspaceId, title, text: `${title} text` } })).json.id);
      }
      // What the indexing saga records: one document indexed into 5 chunks, one failed.
      const record = async (id: string, command: DocumentCommand) =>
        server.platform.readYourWrites((await handleCommand(server.platform.commands, documentAggregate, documentStream(id), command, systemContext('test', 'indexing'))).position);
      await record(ids[0], { type: 'StartIndexing', data: { generation: 1 } });
      await record(ids[0], { type: 'RecordIndexed', data: { generation: 1, chunks: 5, characters: 1200 } });
      await record(ids[1], { type: 'RecordIndexingFailed', data: { generation: 1, reason: 'no text' } });
      const other = await registerOwner(server, 'cli-docs-other');
      await server.request('POST', '/api/v1/documents/text', { headers: { authorization: `Bearer ${other.token}` }, body: { workspace_id: (await server.request('GET', '/api/v1/org/workspaces', { headers: { authorization: `Bearer ${other.token}` } })).json.items[0].id, title: 'Else', text: 'else' } });

      const status = await cli(server.platform.config.dataDir, 'documents', 'status');
      expect(status.code, status.stderr).to.equal(0);
      const lines = status.stdout.trim().split('\n');
      expect(lines[0]).to.match(/^tenant\s+slug\s+status\s+documents\s+chunks$/);
      expect(lines.slice(1, 4)).to.deep.equal([
        `${owner.tenant_id}  cli-docs-org    queued  1          0`,
        `${owner.tenant_id}  cli-docs-org    ready   1          5`,
        `${owner.tenant_id}  cli-docs-org    failed  1          0`,
      ]);
      expect(lines[4]).to.match(new RegExp(`^${other.tenant_id}\\s+cli-docs-other\\s+queued\\s+1\\s+0$`));
      expect(lines[5]).to.equal('1 of 4 documents indexed (25%), 5 chunks in the search index');
      const one = await cli(server.platform.config.dataDir, 'documents', 'status', '--tenant', other.tenant_id);
      expect(one.stdout.trim().split('\n').slice(1)).to.deep.equal([`${other.tenant_id}  cli-docs-other  queued  1          0`, '0 of 1 documents indexed (0%), 0 chunks in the search index']);
      const none = await cli(server.platform.config.dataDir, 'documents', 'status', '--tenant', 'nobody');
      expect(none.stdout.trim().split('\n').slice(1)).to.deep.equal(['(none)']);
      expect((await cli(server.platform.config.dataDir, 'documents', 'status', '--tenant')).code).to.equal(2);
    } finally {
      await server.close();
    }
  });
});

describe('operator CLI: events orchestration (#14)', function () {
  // Each CLI run is a process start (about a second and a half): a dozen of them.
  this.timeout(90_000);

  it('lists, shows, retries a dead-lettered event, refuses to retry a processed one, replays, and redrives the dead letters of a name', async () => {
    // No dispatcher: the events are driven to their statuses through the dispatch queue's commands, as it would.
    const server = await startTestServer({ SCRYPT_LOG_N: '12' }, { orchestrationDispatcher: false });
    try {
      const owner = await registerOwner(server, 'cli-orchestration-org');
      const headers = { authorization: `Bearer ${owner.token}` };
      const emit = async (name: string, payload: Record<string, unknown>): Promise<string> => {
        const response = await server.request('POST', '/api/v1/org/events', { headers, body: { name, payload } });
        expect(response.status, response.text).to.equal(201);
        return response.json.id;
      };
      const dead = await emit('shop.order.created', { order_id: 'A-1' });
      const done = await emit('shop.order.created', { order_id: 'A-2' });
      const queued = await emit('crm.contact.updated', { contact_id: 'C-1' });
      await fail(server, { event_id: dead, tenant_id: owner.tenant_id }, null);
      await processEvent(server, { event_id: done, tenant_id: owner.tenant_id });
      const other = await registerOwner(server, 'cli-orchestration-other');
      const dataDir = server.platform.config.dataDir;

      const listed = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id);
      expect(listed.code, listed.stderr).to.equal(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).to.match(/^id\s+name\s+status\s+attempts\s+received_at$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 4))).to.deep.equal([
        [queued, 'crm.contact.updated', 'queued', '0'],
        [done, 'shop.order.created', 'processed', '1'],
        [dead, 'shop.order.created', 'dead_letter', '1'],
      ]);
      const filtered = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--status', 'dead_letter', '--name', 'shop.order.*', '--limit', '5');
      expect(filtered.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).to.deep.equal([dead]);
      const limited = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--limit', '2');
      expect(limited.stdout.trim().split('\n').slice(1, 3).map((line) => line.split(/\s+/)[0])).to.deep.equal([queued, done]);
      const cursor = /^more: the same command with --cursor (\S+)$/m.exec(limited.stdout)?.[1];
      expect(cursor, limited.stdout).to.be.a('string');
      const next = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--limit', '2', '--cursor', cursor!);
      expect(next.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).to.deep.equal([dead]);
      const within = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--from', '2000-01-01T00:00:00Z', '--to', '2100-01-01T00:00:00Z');
      expect(within.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).to.deep.equal([queued, done, dead]);
      const later = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--from', '2100-01-01T00:00:00Z');
      expect(later.stdout.trim().split('\n').slice(1)).to.deep.equal(['(none)']);
      const chain = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', owner.tenant_id, '--correlation-id', done);
      expect(chain.stdout.trim().split('\n').slice(1).map((line) => line.split(/\s+/)[0])).to.deep.equal([done]);
      const none = await cli(dataDir, 'events', 'orchestration', 'list', '--tenant', other.tenant_id);
      expect(none.stdout.trim().split('\n').slice(1)).to.deep.equal(['(none)']);

      const shown = await cli(dataDir, 'events', 'orchestration', 'show', dead, '--tenant', owner.tenant_id);
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.contain(`event ${dead}  shop.order.created  dead_letter`);
      expect(shown.stdout).to.contain('payload: {"order_id":"A-1"}');
      expect(shown.stdout).to.contain('replay_of: -');
      expect(shown.stdout).to.match(/#1 failed\s+started \S+\s+ended \S+\s+error connector_failed: the connector answered 500/);
      expect(shown.stdout).to.contain('flow test_flow');
      // Another tenant's event is not found, as through the API.
      const elsewhere = await cli(dataDir, 'events', 'orchestration', 'show', dead, '--tenant', other.tenant_id);
      expect(elsewhere.code).to.equal(1);
      expect(elsewhere.stderr).to.contain('orchestration_event_not_found');

      const retried = await cli(dataDir, 'events', 'orchestration', 'retry', dead, '--tenant', owner.tenant_id);
      expect(retried.code, retried.stderr).to.equal(0);
      expect(retried.stdout).to.contain(`re-queued ${dead} (shop.order.created): queued`);
      const afterRetry = (await server.request('GET', `/api/v1/org/events/${dead}`, { headers })).json;
      expect(afterRetry.status).to.equal('queued');
      expect(afterRetry.requeues).to.have.length(1);
      expect(afterRetry.requeues[0]).to.deep.include({ previous_status: 'dead_letter', by: { kind: 'system', id: 'operator-cli' } });
      const refused = await cli(dataDir, 'events', 'orchestration', 'retry', done, '--tenant', owner.tenant_id);
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.contain('event_not_retryable: only a failed or dead-lettered event is retried; this one is processed');

      const replayed = await cli(dataDir, 'events', 'orchestration', 'replay', done, '--tenant', owner.tenant_id, '--reason', 'warehouse lost it');
      expect(replayed.code, replayed.stderr).to.equal(0);
      const replayId = new RegExp(`^replayed ${done} as (\\S+) \\(queued\\)$`).exec(replayed.stdout.trim())![1];
      const replay = (await server.request('GET', `/api/v1/org/events/${replayId}`, { headers })).json;
      expect(replay).to.include({ replay_of: done, name: 'shop.order.created', status: 'queued', received_via: 'replay' });
      expect((await server.request('GET', `/api/v1/org/events/${done}`, { headers })).json.replays).to.deep.equal([replayId]);
      const original = await cli(dataDir, 'events', 'orchestration', 'show', done, '--tenant', owner.tenant_id);
      expect(original.stdout).to.contain(`replays: ${replayId}`);
      const ofReplay = await cli(dataDir, 'events', 'orchestration', 'show', replayId, '--tenant', owner.tenant_id);
      expect(ofReplay.stdout).to.contain(`replay_of: ${done}`);
      expect(ofReplay.stdout).to.contain('attempts: -');

      // Redrive: every dead letter of a name, re-queued in one command.
      const deadAgain = [await emit('shop.order.created', { order_id: 'A-3' }), await emit('shop.order.created', { order_id: 'A-4' })];
      for (const id of deadAgain) await fail(server, { event_id: id, tenant_id: owner.tenant_id }, null);
      const redriven = await cli(dataDir, 'events', 'orchestration', 'redrive', '--tenant', owner.tenant_id, '--name', 'shop.order.*');
      expect(redriven.code, redriven.stderr).to.equal(0);
      expect(redriven.stdout.trim().split('\n')).to.deep.equal([...deadAgain.map((id) => `re-queued ${id}`), '2 re-queued, 0 skipped; a running dispatcher takes them next']);
      for (const id of deadAgain) expect((await server.request('GET', `/api/v1/org/events/${id}`, { headers })).json.requeues[0]).to.deep.include({ previous_status: 'dead_letter', by: { kind: 'system', id: 'operator-cli' } });
    } finally {
      await server.close();
    }
  });

  it('answers usage errors with exit code 2', async () => {
    const dir = temporaryDirectory();
    try {
      for (const args of [
        ['list'],
        ['list', '--tenant'],
        ['list', '--tenant', 't1', '--status', 'lost'],
        ['list', '--tenant', 't1', '--name', 'Not A Name'],
        ['list', '--tenant', 't1', '--limit', '101'],
        ['list', '--tenant', 't1', '--correlation-id', 'with space'],
        ['list', '--tenant', 't1', '--from', 'yesterday'],
        ['list', '--tenant', 't1', '--cursor'],
        ['show', '--tenant', 't1'],
        ['retry', '--tenant', 't1'],
        ['replay', '--tenant', 't1'],
        ['redrive', '--tenant', 't1', '--status', 'processed'],
        ['frobnicate', '--tenant', 't1'],
      ]) {
        const result = await cli(dir.path, 'events', 'orchestration', ...args);
        expect(result.code, args.join(' ')).to.equal(2);
        expect(result.stdout, args.join(' ')).to.match(/^error: /);
      }
    } finally {
      dir.remove();
    }
  });
});

describe('npm start', function () {
  this.timeout(30_000);
  const run = promisify(execFile);
  const MAIN = path.join(__dirname, '..', '..', 'infrastructure', 'main.js');

  it('refuses production without SMTP_URL or MAIL_OUTBOX_ONLY=true, and exits 2 (#9.7)', async () => {
    const dir = temporaryDirectory();
    try {
      const failed = await run(process.execPath, [MAIN], { env: { ...process.env, DATA_DIR: dir.path, LOG_LEVEL: 'silent', NODE_ENV: 'production', METRICS_PUBLIC: 'true', SMTP_URL: '', PORT: '0', HOST: '127.0.0.1' } }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed.code).to.equal(2);
      expect(failed.stderr).to.contain('SMTP_URL: expected an smtp:// or smtps:// URL in production unless MAIL_OUTBOX_ONLY=true');
    } finally {
      dir.remove();
    }
  });

  it('says in one line that the port is taken, and exits 2', async () => {
    const dir = temporaryDirectory();
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    try {
      const failed = await run(process.execPath, [MAIN], { env: { ...process.env, DATA_DIR: dir.path, LOG_LEVEL: 'silent', PORT: String(port), HOST: '127.0.0.1' } }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed.code).to.equal(2);
      expect(failed.stderr.trim().split('\n')).to.deep.equal([`PORT: 127.0.0.1:${port} is already in use; stop what listens there or set PORT to another port`]);
    } finally {
      busy.close();
      dir.remove();
    }
  });
});

describe('operator CLI: connections', function () {
  // Each CLI run is a process start (about a second and a half).
  this.timeout(60_000);

  it('lists an organization’s SDK connections and a connection’s schedules: the next run of each that runs, why the others do not', async () => {
    const secret = 'ssec_cli-connections-secret-0123456789abcdef';
    const server = await startTestServer({ SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' }, { connectorClient: signedConnectorClient(), orchestrationScheduler: false });
    const listening = await createConnector({ signingSecrets: [secret] })
      .tool('sync_stock', { description: 'Sync the stock', chat: false, input_schema: { type: 'object' }, handler: () => ({ output: { synced: true } }) })
      .advertise({
        schedules: [
          { id: 'hourly_stock', cron: '0 * * * *', timezone: 'Europe/Paris', event: 'shop.stock.sync_due', label: 'Hourly stock sync' },
          { id: 'broken_cron', cron: '61 * * * *', event: 'shop.stock.sync_due' },
        ],
      })
      .listen(0, '127.0.0.1');
    try {
      const owner = await registerOwner(server, 'cli-connections-org');
      await subscribeTo(server, owner.tenant_id, 'premium');
      const headers = { authorization: `Bearer ${owner.token}` };
      const created = await server.request('POST', '/api/v1/org/sdk-connections', { headers, body: { name: 'Warehouse', webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: secret, enabled: true } });
      expect(created.status, created.text).to.equal(201);
      const synced = await server.request('POST', `/api/v1/org/sdk-connections/${created.json.id}/sync-tools`, { headers, body: {} });
      expect(synced.status, synced.text).to.equal(200);
      const dataDir = server.platform.config.dataDir;

      const listed = await cli(dataDir, 'connections', 'list', '--tenant', owner.tenant_id);
      expect(listed.code, listed.stderr).to.equal(0);
      const lines = listed.stdout.trim().split('\n');
      expect(lines[0]).to.match(/^id\s+name\s+enabled\s+status\s+tools\s+flows\s+schedules\s+last_sync$/);
      expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 7))).to.deep.equal([[created.json.id, 'Warehouse', 'yes', 'untested', '1', '0', '2']]);
      expect(lines[1].split(/\s+/)[7]).to.equal(synced.json.synced_at);
      expect(listed.stdout).to.not.include(secret);
      expect((await cli(dataDir, 'connections', 'list', '--tenant', 'another-tenant')).stdout.trim().split('\n').slice(1)).to.deep.equal(['(none)']);

      const schedules = await cli(dataDir, 'connections', 'schedules', created.json.id, '--tenant', owner.tenant_id);
      expect(schedules.code, schedules.stderr).to.equal(0);
      const rows = schedules.stdout.trim().split('\n');
      expect(rows[0]).to.match(/^id\s+cron\s+timezone\s+event\s+next_run_at\s+problem$/);
      const [hourly, broken] = rows.slice(1);
      expect(hourly.split(/\s+/).slice(0, 4)).to.deep.equal(['hourly_stock', '0', '*', '*']);
      expect(hourly).to.match(/Europe\/Paris\s+shop\.stock\.sync_due\s+\d{4}-\d\d-\d\dT\d\d:00:00\.000Z\s+-$/);
      expect(broken).to.match(/^broken_cron\s+-\s+-\s+-\s+-\s+\S/);

      const foreign = await cli(dataDir, 'connections', 'schedules', created.json.id, '--tenant', 'another-tenant');
      expect([foreign.code, foreign.stderr.includes('sdk_connection_not_found')]).to.deep.equal([1, true]);
      expect((await cli(dataDir, 'connections', 'schedules', created.json.id)).code).to.equal(2);
    } finally {
      await listening.close();
      await server.close();
    }
  });
});
