import { MongoClient } from 'mongodb';
import { MongoSearchIndex, SEARCH_CHUNKS } from '../../infrastructure/search-index/mongodb';
import { SqliteSearchIndex } from '../../infrastructure/search-index/sqlite';
import { sqliteFixture } from '../support/files';
import { searchIndexContract } from './search-index.contract';

describe('SearchIndex contract: SQLite FTS5', () => {
  searchIndexContract(async () => {
    const { store, dispose } = sqliteFixture((db) => new SqliteSearchIndex(db));
    return { index: store, dispose };
  });
});

describe('SearchIndex contract: SQLite FTS5 with a vector cache too small for any tenant', () => {
  searchIndexContract(async () => {
    const { store, dispose } = sqliteFixture((db) => new SqliteSearchIndex(db, { vectorCacheBytes: 1 }));
    return { index: store, dispose };
  });
});

describe('SearchIndex contract: MongoDB text index', function () {
  const url = process.env.MONGODB_URL;
  if (!url) {
    it('is skipped: set MONGODB_URL (a replica set, e.g. mongodb://localhost:27017/svc_test?replicaSet=rs0) to run it', function () {
      console.log('    MongoDB search index contract skipped: MONGODB_URL is not set');
      this.skip();
    });
    return;
  }
  searchIndexContract(async () => {
    const client = await new MongoClient(url, { ignoreUndefined: true }).connect();
    const db = client.db();
    const index = new MongoSearchIndex(client, db);
    return {
      index,
      dispose: async () => {
        // Tenants are unique per test: remove what this one wrote.
        await db.collection(SEARCH_CHUNKS).deleteMany({ tenant_id: { $regex: '^tenant-' } });
        await client.close();
      },
    };
  });
});
