// A data folder written before the stream-name rule is refused with one clear line, by the
// server and the CLI alike, rather than read with names this release would not find.

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { newEvent } from '../support/events';
import { temporaryDirectory } from '../support/files';

const run = promisify(execFile);
const SERVER = path.join(__dirname, '..', '..', 'infrastructure', 'main.js');
const CLI = path.join(__dirname, '..', '..', 'adapters', 'cli', 'main.js');

async function exitOf(script: string, dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], { env: { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent' }, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('data folder written with the old stream names', function () {
  this.timeout(30_000);
  const dir = temporaryDirectory();
  after(() => dir.remove());

  before(async () => {
    // What an earlier release left behind: events, and no data format mark.
    const db = openSqliteDatabase(path.join(dir.path, 'platform.db'));
    const store = new SqliteEventStore(db);
    await store.appendToStream('reservation-user_email-ada@example.com', [newEvent('ReservationClaimed', { scope: 'user_email', value: 'ada@example.com', owner_id: 'u1' })]);
    await store.close();
    db.close();
  });

  it('is refused by the server in one line, exit code 2', async () => {
    const result = await exitOf(SERVER, dir.path);
    expect(result.code).to.equal(2);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    expect(result.stderr).to.contain('holds events written with the old stream names').and.to.contain('point DATA_DIR at an empty one');
  });

  it('is refused by the operator CLI in one line, exit code 2', async () => {
    const result = await exitOf(CLI, dir.path, 'projections', 'status');
    expect(result.code).to.equal(2);
    expect(result.stderr.trim().split('\n')).to.have.length(1);
    expect(result.stderr).to.contain('holds events written with the old stream names');
  });
});
