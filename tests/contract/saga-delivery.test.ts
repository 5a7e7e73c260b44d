import { CheckpointedSagaDelivery } from '../../application/sagas/checkpointed-delivery';
import { connectEventStoreDb } from '../../infrastructure/event-store/eventstoredb';
import { EventStoreDbSagaDelivery } from '../../infrastructure/event-store/eventstoredb-saga-delivery';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { systemClock } from '../../infrastructure/system';
import { sqliteFixture } from '../support/files';
import { embeddedStores } from '../support/stores';
import { sagaDeliveryContract } from './saga-delivery.contract';

describe('SagaDelivery contract: embedded (checkpointed)', () => {
  sagaDeliveryContract(async () => {
    const stores = embeddedStores();
    const delivery = new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock: systemClock }, { retryPollMs: 20, idleCheckpointMs: 0 });
    return { eventStore: stores.eventStore, delivery, dispose: () => stores.dispose() };
  });
});

describe('SagaDelivery contract: EventStoreDB persistent subscriptions', function () {
  const url = process.env.EVENTSTORE_URL;
  if (!url) {
    it('is skipped: set EVENTSTORE_URL (e.g. esdb://localhost:2113?tls=false) to run it', function () {
      console.log('    EventStoreDB saga delivery contract suite skipped: EVENTSTORE_URL is not set');
      this.skip();
    });
    return;
  }
  sagaDeliveryContract(async () => {
    const eventStore = connectEventStoreDb(url);
    const failures = sqliteFixture((db) => new SqliteReadStore(db));
    const delivery = new EventStoreDbSagaDelivery(eventStore.client, failures.store);
    return {
      eventStore,
      delivery,
      async dispose() {
        await eventStore.close();
        await failures.dispose();
      },
    };
  });
});
