// The projection thread (projection-thread.ts): builds some projections of the embedded store
// on a thread of their own, into a file of their own. It follows `$all` on its own connection
// to the events file, woken by the serving thread after each commit (`head`), writes the read
// models on its own connection to the projection file, and tells the serving thread how far
// each projection got (`progress`), which is what read-your-writes waits for there.

import { parentPort, workerData } from 'node:worker_threads';
import { DecodingEventStore } from '../../application/events/decoding-event-store';
import { allProjections } from '../../projections/index';
import { ProjectionRunner } from '../../projections/runner';
import { SqliteEventStore } from '../event-store/sqlite';
import { createLogger } from '../logging/logger';
import { SqliteReadStore } from '../read-store/sqlite';
import { systemClock } from '../system';
import { openSqliteDatabase } from './database';
import type { ProjectionThreadData, ToProjectionThread, FromProjectionThread } from './projection-thread';

const data = workerData as ProjectionThreadData;
const post = (message: FromProjectionThread): void => parentPort!.postMessage(message);
const logger = createLogger(data.logLevel).child({ component: 'projection_thread' });

async function main(): Promise<void> {
  const eventsDb = openSqliteDatabase(data.eventsFile, { synchronous: data.synchronous });
  const readModelsDb = openSqliteDatabase(data.readModelsFile, { synchronous: data.synchronous });
  const rawEvents = new SqliteEventStore(eventsDb);
  const readStore = new SqliteReadStore(readModelsDb, { cacheTtlMs: data.readCacheTtlMs });
  const projections = allProjections.filter((projection) => data.projections.includes(projection.name));
  const runner = new ProjectionRunner({ eventStore: new DecodingEventStore(rawEvents), readStore, clock: systemClock, logger }, projections, {
    leaseHolder: data.leaseHolder,
    leaseTtlMs: data.leaseTtlMs,
  });
  runner.onProgress((progress) => post({ kind: 'progress', progress }));

  let stopping: Promise<void> | null = null;
  parentPort!.on('message', (message: ToProjectionThread) => {
    if (message.kind === 'head') {
      rawEvents.appendedElsewhere(message.head);
      return;
    }
    if (message.kind === 'rebuild') {
      runner.rebuild(message.name).then(
        (result) => post({ kind: 'rebuilt', id: message.id, result }),
        (error: unknown) => post({ kind: 'rebuild_failed', id: message.id, message: error instanceof Error ? error.message : String(error) }),
      );
      return;
    }
    stopping ??= (async () => {
      await runner.stop();
      await rawEvents.close();
      await readStore.close();
      eventsDb.close();
      readModelsDb.close();
      post({ kind: 'stopped' });
      // Nothing is left to do: whatever timer a library left behind does not hold the thread.
      process.exit(0);
    })();
  });

  await runner.start();
  post({ kind: 'ready' });
}

main().catch((error: unknown) => {
  // The serving thread logs it and starts the thread again (projection-thread.ts).
  post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
