import { connectMongoReadStore } from '../../infrastructure/read-store/mongodb';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { readStoreContract } from './read-store.contract';
import { sqliteFixture } from '../support/files';

describe('ReadStore contract: SQLite', () => {
  readStoreContract(async () => sqliteFixture((db) => new SqliteReadStore(db)));
});

describe('ReadStore contract: SQLite with the in-process read cache', () => {
  readStoreContract(async () => sqliteFixture((db) => new SqliteReadStore(db, { cacheTtlMs: 60_000 })));
});

describe('ReadStore contract: MongoDB', function () {
  const url = process.env.MONGODB_URL;
  if (!url) {
    it('is skipped: set MONGODB_URL (a replica set, e.g. mongodb://localhost:27017/svc_test?replicaSet=rs0) to run it', function () {
      console.log('    MongoDB contract suite skipped: MONGODB_URL is not set');
      this.skip();
    });
    return;
  }
  readStoreContract(async () => {
    const store = await connectMongoReadStore(url);
    return { store, dispose: () => store.close() };
  });
});
