// The projection thread (projection-thread.ts): builds some projections of the embedded store
// on a thread of their own, into a file of their own. It follows `$all` on its own connection
// to the events file, woken by the serving thread after each commit (`head`), writes the read
// models on its own connection to the projection file, and tells the serving thread how far
// each projection got (`progress`), which is what read-your-writes waits for there.

import { parentPort, workerData } from 'node:worker_threads';
import { AuditAnchoring, type CheckpointToRecord } from '../../application/audit-log/audit-anchoring';
import { DecodingEventStore } from '../../application/events/decoding-event-store';
import { Ed25519AuditSigner } from '../crypto/audit-signer';
import { allProjections } from '../../projections/index';
import { ProjectionRunner } from '../../projections/runner';
import { SqliteEventStore } from '../event-store/sqlite';
import { AesGcmSecrets } from '../crypto/secrets';
import { SqliteSubjectKeyTable } from '../personal-data/sqlite';
import { KeyedPersonalDataVault } from '../personal-data/vault';
import { payloadKeyKeptUntil } from '../../domain/orchestration-event/payloads';
import { createLogger } from '../logging/logger';
import { SqliteReadStore } from '../read-store/sqlite';
import { systemClock, uuidGenerator } from '../system';
import { localProcesses } from '../leases/local-processes';
import { derivedDataSynchronous, openSqliteDatabase } from './database';
import { type ProjectionThreadData, type ToProjectionThread, type FromProjectionThread, checkpointOutcome } from './projection-thread';
import { messageOf } from '../../domain/shared/errors';

const data = workerData as ProjectionThreadData;
const post = (message: FromProjectionThread): void => parentPort!.postMessage(message);
const logger = createLogger(data.logLevel).child({ component: 'projection_thread' });

async function main(): Promise<void> {
  const eventsDb = openSqliteDatabase(data.eventsFile, { synchronous: data.synchronous });
  const readModelsDb = openSqliteDatabase(data.readModelsFile, { synchronous: derivedDataSynchronous(data.synchronous) });
  const rawEvents = new SqliteEventStore(eventsDb);
  const readStore = new SqliteReadStore(readModelsDb, { cacheTtlMs: data.readCacheTtlMs });
  const projections = allProjections.filter((projection) => data.projections.includes(projection.name));
  // Sealed fields (orchestration payloads) are opened here as on the serving thread: the key table
  // is read on its own connection to the events file, on each use, so an erasure holds here at once.
  const subjectKeys = new SqliteSubjectKeyTable(openSqliteDatabase(data.eventsFile, { synchronous: data.synchronous }));
  const vault = new KeyedPersonalDataVault(subjectKeys, new AesGcmSecrets(Buffer.from(data.dataKey)), systemClock, payloadKeyKeptUntil);
  const runner = new ProjectionRunner({ eventStore: new DecodingEventStore(rawEvents, vault), readStore, clock: systemClock, logger }, projections, {
    leaseHolder: data.leaseHolder,
    leaseTtlMs: data.leaseTtlMs,
    leaseHolderIsGone: localProcesses().isGone,
  });
  runner.onProgress((progress) => post({ kind: 'progress', progress }));

  // The checkpoints it records are appended by the serving thread, the one writer of the events file.
  let nextRecord = 1;
  const recording = new Map<number, (answer: Extract<ToProjectionThread, { kind: 'checkpoint_recorded' }>) => void>();
  const record = (toRecord: CheckpointToRecord): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const id = nextRecord++;
      recording.set(id, (answer) => {
        try {
          checkpointOutcome(answer);
          resolve();
        } catch (error) {
          reject(error);
        }
      });
      post({ kind: 'record_checkpoint', id, toRecord });
    });
  const anchoring = data.anchoring
    ? new AuditAnchoring(
        {
          eventStore: new DecodingEventStore(rawEvents, vault),
          clock: systemClock,
          ids: uuidGenerator,
          readStore,
          signer: new Ed25519AuditSigner(data.anchoring.privateKey, data.anchoring.publicKey, data.anchoring.previousPublicKeys),
          logger: logger.child({ component: 'audit_anchoring' }),
          record,
        },
        { entriesPerCheckpoint: data.anchoring.entriesPerCheckpoint, intervalMs: data.anchoring.intervalMs, pollMs: data.anchoring.pollMs },
      )
    : null;

  let stopping: Promise<void> | null = null;
  parentPort!.on('message', (message: ToProjectionThread) => {
    if (message.kind === 'head') {
      rawEvents.appendedElsewhere(message.head);
      return;
    }
    if (message.kind === 'checkpoint_recorded') {
      const settle = recording.get(message.id);
      recording.delete(message.id);
      settle?.(message);
      return;
    }
    if (message.kind === 'anchor_once' || message.kind === 'rebuild') {
      const work = message.kind === 'rebuild' ? runner.rebuild(message.name) : anchoring ? anchoring.runOnce() : Promise.reject(new Error('the audit anchoring does not run on this thread'));
      work.then(
        (result) => post({ kind: 'answer', id: message.id, result: result ?? null, failure: null }),
        (error: unknown) => post({ kind: 'answer', id: message.id, result: null, failure: messageOf(error) }),
      );
      return;
    }
    stopping ??= (async () => {
      await anchoring?.stop();
      await runner.stop();
      await rawEvents.close();
      await subjectKeys.close();
      await readStore.close();
      eventsDb.close();
      readModelsDb.close();
      post({ kind: 'stopped' });
      // Nothing is left to do: whatever timer a library left behind does not hold the thread.
      process.exit(0);
    })();
  });

  await runner.start();
  anchoring?.start();
  post({ kind: 'ready' });
}

main().catch((error: unknown) => {
  // The serving thread logs it and starts the thread again (projection-thread.ts).
  post({ kind: 'failed', message: messageOf(error) });
  process.exit(1);
});
