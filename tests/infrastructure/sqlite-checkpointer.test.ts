// The background checkpointer of the embedded file: a worker thread copies the WAL back into
// the database while the serving connection never checkpoints inline; stopped or unable to
// start, the connection checkpoints inline again.

import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BackgroundCheckpointer } from '../../infrastructure/sqlite/checkpointer';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { temporaryDirectory } from '../support/files';

const autoCheckpoint = (db: SqliteDatabase): number => db.pragma('wal_autocheckpoint', { simple: true }) as number;

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('background checkpointer of the embedded file', () => {
  let dir: ReturnType<typeof temporaryDirectory>;
  let file: string;
  let db: SqliteDatabase;

  beforeEach(() => {
    dir = temporaryDirectory();
    file = path.join(dir.path, 'store.db');
    db = openSqliteDatabase(file);
    db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  });
  afterEach(() => {
    if (db.open) db.close();
    dir.remove();
  });

  // 2,000 pages of 4 KB, past SQLite's own threshold of 1,000: inline, the commit that passes it would checkpoint.
  const writeEightMegabytes = (): void => {
    const insert = db.prepare('INSERT INTO blobs (body) VALUES (?)');
    for (let batch = 0; batch < 16; batch += 1) db.transaction(() => Array.from({ length: 128 }, () => insert.run(Buffer.alloc(4000, batch))))();
  };

  it('copies the WAL into the database from its worker while the connection checkpoints nothing inline', async () => {
    const checkpointer = await BackgroundCheckpointer.start(db, file, { synchronous: 'full', intervalMs: 20 });
    expect(checkpointer).to.not.equal(null);
    try {
      expect(autoCheckpoint(db)).to.equal(0);
      const before = fs.statSync(file).size;
      writeEightMegabytes();
      await until(() => fs.statSync(file).size >= before + 8_000_000);
      expect(checkpointer!.status().background).to.equal(true);
      expect((db.prepare('SELECT count(*) AS n FROM blobs').get() as { n: number }).n).to.equal(2048);
    } finally {
      await checkpointer!.stop();
    }
    // Stopped: the connection checkpoints inline again.
    expect(autoCheckpoint(db)).to.equal(1000);
    expect(checkpointer!.status().background).to.equal(false);
  });

  it('keeps the process alive while it stops (its worker is otherwise no reason to stay)', async () => {
    // A process whose last work is stopping the checkpointer: it must get to the line after.
    const script = `
      const { openSqliteDatabase } = require(${JSON.stringify(path.resolve(__dirname, '../../infrastructure/sqlite/database.js'))});
      const { BackgroundCheckpointer } = require(${JSON.stringify(path.resolve(__dirname, '../../infrastructure/sqlite/checkpointer.js'))});
      const db = openSqliteDatabase(${JSON.stringify(path.join(dir.path, 'child.db'))});
      BackgroundCheckpointer.start(db, ${JSON.stringify(path.join(dir.path, 'child.db'))}, { synchronous: 'full' })
        .then((checkpointer) => checkpointer.stop())
        .then(() => { process.stdout.write('stopped'); process.exitCode = 3; });`;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(child.stdout).to.equal('stopped');
    expect(child.status).to.equal(3);
  });

  it('gives checkpoints back to the connection when its worker stops on its own, and says why', async () => {
    // A worker that says it is ready, then exits.
    const script = path.join(dir.path, 'quitting-worker.js');
    fs.writeFileSync(script, "const { parentPort } = require('node:worker_threads'); parentPort.postMessage({ kind: 'ready' }); setTimeout(() => process.exit(7), 20);");
    const reasons: string[] = [];
    const checkpointer = await BackgroundCheckpointer.start(db, file, { synchronous: 'full', workerScript: script, onFallback: (reason) => reasons.push(reason) });
    expect(autoCheckpoint(db)).to.equal(0);
    await until(() => reasons.length > 0);
    expect(reasons).to.deep.equal(['checkpoint worker exited (7)']);
    expect(autoCheckpoint(db)).to.equal(1000);
    expect(checkpointer!.status().background).to.equal(false);
    await checkpointer!.stop();
  });

  it('leaves checkpoints inline when its worker cannot open the file', async () => {
    const onFallback: string[] = [];
    const checkpointer = await BackgroundCheckpointer.start(db, path.join(dir.path, 'missing', 'store.db'), { synchronous: 'full', onFallback: (reason) => onFallback.push(reason) });
    expect(checkpointer).to.equal(null);
    expect(autoCheckpoint(db)).to.equal(1000);
    writeEightMegabytes();
    // SQLite checkpointed inline: the rows are in the database file, not only in the WAL.
    expect(fs.statSync(file).size).to.be.greaterThan(4_000_000);
  });
});
