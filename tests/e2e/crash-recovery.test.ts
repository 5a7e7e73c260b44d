// kill -9 during a stream of commands, then restart on the same data folder: no acknowledged
// event is lost, and projections resume from their checkpoints without applying twice.

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { silentLogger } from '../../application/ports/logger';
import { loadConfig } from '../../infrastructure/config/config';
import { createPlatform } from '../../infrastructure/composition-root';
import { allProjections } from '../../projections/index';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type CounterDocument, countingProjection } from '../support/counting-projection';
import { temporaryDirectory } from '../support/files';

interface Ack {
  stream: string;
  revision: number;
  position: number;
}

function runWriterUntil(dataDir: string, acks: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'command-writer.js'), dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const seen: Ack[] = [];
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const [word, stream, revision, position] = line.split(' ');
      if (word !== 'ACK') return;
      seen.push({ stream, revision: Number(revision), position: Number(position) });
      if (seen.length === acks) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(seen);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
}

describe('crash recovery (child process killed with SIGKILL)', function () {
  this.timeout(60_000);

  it('keeps every acknowledged event and resumes projections without double effects', async () => {
    const dir = temporaryDirectory();
    try {
      const acks = await runWriterUntil(dir.path, 400);
      expect(acks.length).to.be.at.least(400);

      const config = loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', LEASE_TTL_MS: '1000' });
      const platform = await createPlatform(config, { logger: silentLogger, projections: [...allProjections, countingProjection()] });
      try {
        for (const ack of acks) {
          const [event] = await platform.eventStore.readStream(ack.stream, { fromRevision: ack.revision, maxCount: 1 });
          expect(event, `${ack.stream}@${ack.revision}`).to.not.equal(undefined);
          expect(event.position).to.equal(ack.position);
        }
        const checkpointBeforeRestart = (await platform.readStore.getProjectionState('counters'))?.checkpoint ?? 0;
        expect(checkpointBeforeRestart, 'the killed process had committed projection batches').to.be.greaterThan(0);

        await platform.start();
        expect(await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 20_000 })).to.equal(true);
        const tenantStreams = [...new Set(acks.map((ack) => ack.stream))];
        for (const stream of tenantStreams) {
          const events = await platform.eventStore.readStream(stream);
          const counter = await platform.readStore.collection<CounterDocument>('counters').get(stream);
          expect(counter?.count, stream).to.equal(events.length);
          const tenantId = stream.slice('tenant-'.length);
          const tenant = await platform.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
          const last = events[events.length - 1];
          expect(tenant?.name).to.equal((last.data as { name: string }).name);
          expect(tenant?.position).to.equal(last.position);
        }
      } finally {
        await platform.close();
      }
    } finally {
      dir.remove();
    }
  });
});
