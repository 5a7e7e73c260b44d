import { connectEventStoreDb } from '../../infrastructure/event-store/eventstoredb';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { eventStoreContract } from './event-store.contract';
import { temporaryDirectory } from '../support/files';

describe('EventStore contract: SQLite', () => {
  eventStoreContract(async () => {
    const dir = temporaryDirectory();
    const db = openSqliteDatabase(`${dir.path}/events.db`);
    const store = new SqliteEventStore(db, { pollIntervalMs: 50 });
    return {
      store,
      async dispose() {
        await store.close();
        db.close();
        dir.remove();
      },
    };
  });
});

describe('EventStore contract: EventStoreDB', function () {
  const url = process.env.EVENTSTORE_URL;
  if (!url) {
    it('is skipped: set EVENTSTORE_URL (e.g. esdb://localhost:2113?tls=false) to run it', function () {
      console.log('    EventStoreDB contract suite skipped: EVENTSTORE_URL is not set');
      this.skip();
    });
    return;
  }
  eventStoreContract(async () => {
    const store = connectEventStoreDb(url);
    return { store, dispose: () => store.close() };
  });
});
