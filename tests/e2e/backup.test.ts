// `npm run cli -- backup DEST` as an operator runs it: a separate process copying the data
// folder of a server that keeps writing, and a new server started on the copy.

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { BLOBS_FOLDER } from '../../infrastructure/composition-root';
import { type Account, registerOwner } from '../support/identity';
import { temporaryDirectory } from '../support/files';
import { type TestServer, startTestServer } from '../support/server';

const run = promisify(execFile);
const CLI = path.join(__dirname, '..', '..', 'adapters', 'cli', 'main.js');

async function backup(dataDir: string, destination: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return cli(['backup', destination], { DATA_DIR: dataDir, ...env });
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Every file below a folder, as relative paths. */
function filesBelow(folder: string, prefix = ''): string[] {
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesBelow(path.join(folder, entry.name), `${prefix}${entry.name}/`) : entry.isFile() ? [`${prefix}${entry.name}`] : []))
    .sort();
}

describe('backup of the embedded data folder (CLI)', function () {
  this.timeout(60_000);
  const backups = temporaryDirectory();
  let source: TestServer;
  let restored: TestServer | null = null;
  let owner: Account;
  let documentId: string;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const teamNames = async (server: TestServer): Promise<string[]> => {
    const response = await server.request('GET', '/api/v1/org/teams?limit=100', { headers: as(owner) });
    expect(response.status, response.text).to.equal(200);
    return response.json.items.map((team: { name: string }) => team.name).sort();
  };

  before(async () => {
    source = await startTestServer({ SCRYPT_LOG_N: '10' });
    owner = await registerOwner(source, 'backed-up');
    const workspaceId = (await source.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    const document = await source.request('POST', '/api/v1/documents/text', { headers: as(owner), body: { workspace_id: workspaceId, title: 'Opening hours', text: 'We open at nine.' } });
    expect(document.status, document.text).to.equal(201);
    documentId = document.json.id;
  });

  after(async () => {
    await restored?.close();
    await source.close().catch(() => undefined);
    backups.remove();
  });

  it('copies a folder a server keeps writing to; a server started on the copy has its data, its keys and its documents\' bytes', async () => {
    const dataDir = source.platform.config.dataDir;
    expect(filesBelow(path.join(dataDir, BLOBS_FOLDER))).to.not.deep.equal([]);
    const before = ['team 0', 'team 1'];
    for (const name of before) expect((await source.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name } })).status).to.equal(201);

    // Teams keep being created while the backup runs in another process.
    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let index = 2; writing && index < 90; index += 1) {
        const response = await source.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: `team ${index}` } });
        expect(response.status, response.text).to.equal(201);
        written.push(`team ${index}`);
      }
    })();
    while (written.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const writtenBefore = written.length;
    const destination = path.join(backups.path, 'nightly');
    const result = await backup(dataDir, destination);
    writing = false;
    await writer;
    expect(written.length, 'teams created while the backup ran').to.be.above(writtenBefore);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/backed up to .*nightly: events up to position \d+/);

    const manifest = JSON.parse(fs.readFileSync(path.join(destination, 'backup.json'), 'utf8'));
    expect(manifest.format).to.equal('svc-backup-1');
    expect(manifest.files.map((file: { path: string }) => file.path)).to.deep.equal(['read-models.db', 'platform.db', 'keys.json']);
    expect(manifest.blobs.files).to.equal(filesBelow(path.join(dataDir, BLOBS_FOLDER)).length);
    expect(filesBelow(path.join(destination, BLOBS_FOLDER))).to.deep.equal(filesBelow(path.join(dataDir, BLOBS_FOLDER)));
    expect(fs.statSync(destination).mode & 0o777).to.equal(0o700);
    expect(fs.readdirSync(backups.path)).to.deep.equal(['nightly']);
    // Each database one self-contained file: no -wal or -shm beside it.
    expect(fs.readdirSync(destination).sort()).to.deep.equal(['backup.json', 'blobs', 'keys.json', 'platform.db', 'read-models.db']);
    const whole = await cli(['verify-backup', destination]);
    expect(whole.code, whole.stdout).to.equal(0);
    expect(whole.stdout).to.contain('ok: platform.db: ').and.to.contain('quick_check ok').and.to.contain(`${destination} is whole`);
    expect(fs.readdirSync(destination).sort(), 'verifying reads only').to.deep.equal(['backup.json', 'blobs', 'keys.json', 'platform.db', 'read-models.db']);

    await source.close();
    restored = await startTestServer({ DATA_DIR: destination, SCRYPT_LOG_N: '10' });
    // The token the first server signed is good on the second: the keys came along.
    const teams = await teamNames(restored);
    // Every team made before the backup started, and those made while it ran up to one commit:
    // the first of them, in the order they were made, and nothing else.
    const during = written.filter((name) => teams.includes(name));
    expect(during).to.deep.equal(written.slice(0, during.length));
    expect(teams).to.deep.equal([...before, ...during].sort());
    const head = Number(manifest.event_head);
    expect(await restored.platform.eventStore.headPosition()).to.be.at.least(head);
    const view = await restored.request('GET', `/api/v1/documents/${documentId}/view`, { headers: as(owner) });
    expect(view.status).to.equal(200);
    expect(view.text).to.equal('We open at nine.');
    const verified = await restored.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(verified.status, verified.text).to.equal(200);
    expect(verified.json.ok, verified.text).to.equal(true);
    // And it goes on writing.
    const after = await restored.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'after the restore' } });
    expect(after.status, after.text).to.equal(201);
  });

  it('refuses a destination that exists and is not empty, the data folder itself, and a folder with no store, leaving nothing behind', async () => {
    const taken = path.join(backups.path, 'taken');
    fs.mkdirSync(taken);
    fs.writeFileSync(path.join(taken, 'notes.txt'), 'keep me');
    const dataDir = restored!.platform.config.dataDir;

    const onTaken = await backup(dataDir, taken);
    expect(onTaken.code).to.equal(2);
    expect(onTaken.stderr.trim()).to.equal(`${taken} already exists and is not an empty folder: name a new one`);
    expect(fs.readdirSync(taken)).to.deep.equal(['notes.txt']);

    const inside = await backup(dataDir, path.join(dataDir, 'copy'));
    expect(inside.code).to.equal(2);
    expect(inside.stderr).to.contain('is inside the data folder');

    const empty = temporaryDirectory();
    try {
      const nothing = await backup(empty.path, path.join(backups.path, 'of-nothing'));
      expect(nothing.code).to.equal(2);
      expect(nothing.stderr.trim()).to.equal(`${empty.path} holds no embedded store (platform.db): check DATA_DIR`);
    } finally {
      empty.remove();
    }
    const usage = await backup(dataDir, '');
    expect(usage.code).to.equal(2);
    expect(fs.readdirSync(backups.path).sort()).to.deep.equal(['nightly', 'taken']);
  });

  it('verify-backup names a file changed, a blob missing, and a folder that is no backup', async () => {
    const destination = path.join(backups.path, 'damaged');
    expect((await backup(restored!.platform.config.dataDir, destination)).code).to.equal(0);
    const keys = path.join(destination, 'keys.json');
    fs.writeFileSync(keys, `${fs.readFileSync(keys, 'utf8')} `);
    const [firstBlob] = filesBelow(path.join(destination, BLOBS_FOLDER));
    fs.rmSync(path.join(destination, BLOBS_FOLDER, firstBlob!));
    const verified = await cli(['verify-backup', destination]);
    expect(verified.code).to.equal(1);
    expect(verified.stdout).to.match(/problem: keys\.json: \d+ bytes with SHA-256 [0-9a-f]{64}, recorded as \d+ bytes/);
    expect(verified.stdout).to.match(/problem: blobs\/: \d+ files, recorded as \d+/);
    expect(verified.stdout).to.contain('ok: platform.db: ').and.to.contain(`${destination} is not whole: 2 problem(s)`);

    const notABackup = await cli(['verify-backup', backups.path]);
    expect(notABackup.code).to.equal(2);
    expect(notABackup.stderr).to.contain(`has no readable backup.json`);
  });

  it('refuses when the events are in EventStoreDB, and says how they are backed up', async () => {
    const result = await backup(restored!.platform.config.dataDir, path.join(backups.path, 'esdb'), { EVENTSTORE_URL: 'esdb://localhost:2113?tls=false' });
    expect(result.code).to.equal(2);
    expect(result.stderr).to.contain('the events are in EventStoreDB (EVENTSTORE_URL)').and.to.contain('back it up with its own tools');
    expect(fs.existsSync(path.join(backups.path, 'esdb'))).to.equal(false);
  });

  it('says what is not in the backup: documents kept in S3, keys given in the environment, read models in MongoDB', async () => {
    const destination = path.join(backups.path, 'with-notes');
    const result = await backup(restored!.platform.config.dataDir, destination, {
      DATA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      S3_BUCKET: 'svc-documents',
      MONGODB_URL: 'mongodb://localhost:27017/svc?replicaSet=rs0',
    });
    expect(result.code, result.stderr).to.equal(0);
    const notes = result.stdout.split('\n').filter((line) => line.startsWith('note: '));
    expect(notes).to.have.length(3);
    expect(notes.join('\n'))
      .to.contain("documents' original bytes are in the S3 bucket svc-documents, not in this backup")
      .and.to.contain('TOKEN_SECRET_KEY / DATA_ENCRYPTION_KEY come from the environment: keep them with this backup')
      .and.to.contain('the read models are in MongoDB (MONGODB_URL), not in this backup');
    expect(JSON.parse(fs.readFileSync(path.join(destination, 'backup.json'), 'utf8')).notes).to.have.length(3);
    // With the documents in S3, the folder's blobs are not copied.
    expect(fs.existsSync(path.join(destination, BLOBS_FOLDER))).to.equal(false);
  });
});
