import { connectEventStoreDb } from '../../infrastructure/event-store/eventstoredb';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { eventStoreContract } from './event-store.contract';
import { sqliteFixture } from '../support/files';

describe('EventStore contract: SQLite', () => {
  eventStoreContract(async () => sqliteFixture((db) => new SqliteEventStore(db, { pollIntervalMs: 50 })));
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
