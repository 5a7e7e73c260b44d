import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';
import { MongoSubjectKeyTable, SUBJECT_KEYS_COLLECTION } from '../../infrastructure/personal-data/mongodb';
import { SqliteSubjectKeyTable } from '../../infrastructure/personal-data/sqlite';
import { KeyedPersonalDataVault } from '../../infrastructure/personal-data/vault';
import { openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { temporaryDirectory } from '../support/files';
import { ManualClock } from '../support/stores';
import { personalDataVaultContract } from './personal-data-vault.contract';

describe('PersonalDataVault contract: SQLite key table', () => {
  personalDataVaultContract(async () => {
    const dir = temporaryDirectory();
    const tables = [new SqliteSubjectKeyTable(openSqliteDatabase(`${dir.path}/platform.db`)), new SqliteSubjectKeyTable(openSqliteDatabase(`${dir.path}/platform.db`))] as const;
    return {
      tables: [tables[0], tables[1]],
      async dispose() {
        for (const table of tables) await table.close();
        dir.remove();
      },
    };
  });

  it('leaves no copy of an erased key in the file once its log is checkpointed', async () => {
    const dir = temporaryDirectory();
    const db = openSqliteDatabase(`${dir.path}/platform.db`);
    const table = new SqliteSubjectKeyTable(db);
    const vault = new KeyedPersonalDataVault(table, new AesGcmSecrets(randomBytes(32)), new ManualClock());
    await vault.seal('conversation:one', ['text']);
    const [row] = (await table.find(['conversation:one'])).values();
    const keySealed = Buffer.from(row.key_sealed as string);
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(`${dir.path}/platform.db`).includes(keySealed)).to.equal(true);
    await vault.erase('conversation:one');
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(readFileSync(`${dir.path}/platform.db`).includes(keySealed)).to.equal(false);
    await table.close();
    dir.remove();
  });
});

describe('PersonalDataVault contract: MongoDB key table', function () {
  const url = process.env.MONGODB_URL;
  if (!url) {
    it('is skipped: set MONGODB_URL (a replica set, e.g. mongodb://localhost:27017/svc_test?replicaSet=rs0) to run it', function () {
      console.log('    MongoDB personal-data key table contract skipped: MONGODB_URL is not set');
      this.skip();
    });
    return;
  }
  personalDataVaultContract(async () => {
    const clients = [await new MongoClient(url).connect(), await new MongoClient(url).connect()];
    return {
      tables: [new MongoSubjectKeyTable(clients[0].db()), new MongoSubjectKeyTable(clients[1].db())],
      async dispose() {
        await clients[0].db().collection(SUBJECT_KEYS_COLLECTION).deleteMany({ _id: { $regex: '^conversation:test-' } } as never);
        for (const client of clients) await client.close();
      },
    };
  });
});
