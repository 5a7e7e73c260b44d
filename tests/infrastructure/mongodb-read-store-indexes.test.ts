// What the MongoDB read store asks of MongoDB for its indexes, recorded by a stand-in for the
// driver's database: the contract suite runs against a real server only when MONGODB_URL is
// set, and none can run here, so this checks the adapter's side of compound, sparse and
// redeclared indexes and of hints on every run. The server's side is the contract suite's.

import { expect } from 'chai';
import type { MongoClient } from 'mongodb';
import { MongoReadStore } from '../../infrastructure/read-store/mongodb';

interface Call {
  op: 'createIndex' | 'dropIndex' | 'find';
  args: unknown[];
}

/** A database whose collections hold index definitions and record what was asked of them. */
function standInClient(existing: Record<string, Array<{ name: string; key: Record<string, number> }>>) {
  const calls: Call[] = [];
  const indexes = new Map(Object.entries(existing).map(([name, list]) => [name, [...list]]));
  const collection = (name: string) => {
    const list = () => indexes.get(name) ?? indexes.set(name, [{ name: '_id_', key: { _id: 1 } }]).get(name)!;
    return {
      listIndexes: () => ({ toArray: async () => [...list()] }),
      createIndex: async (key: Record<string, number>, options: { name: string }) => {
        calls.push({ op: 'createIndex', args: [key, options] });
        if (!list().some((index) => index.name === options.name)) list().push({ name: options.name, key });
        return options.name;
      },
      dropIndex: async (indexName: string) => {
        calls.push({ op: 'dropIndex', args: [indexName] });
        indexes.set(name, list().filter((index) => index.name !== indexName));
      },
      find: (filter: unknown, options: unknown) => {
        calls.push({ op: 'find', args: [filter, options] });
        const cursor = { sort: () => cursor, limit: () => cursor, toArray: async () => [] };
        return cursor;
      },
    };
  };
  const db = { createCollection: async () => undefined, collection };
  return { client: { db: () => db } as unknown as MongoClient, calls, indexes };
}

describe('MongoDB read store: the indexes it asks for (stand-in driver)', () => {
  it('makes a compound index named after its keys, a sparse one as a full index, and hints by key pattern', async () => {
    const { client, calls } = standInClient({});
    const store = new MongoReadStore(client, 'svc');
    await store.ensureCollection({ name: 'entries', indexes: [{ field: 'tenant_id', then: ['seq'] }, { field: 'due_at', sparse: true }, { field: 'email', unique: true }] });
    const created = calls.filter((call) => call.op === 'createIndex').map((call) => call.args as [Record<string, number>, { name: string; unique?: boolean; partialFilterExpression?: Record<string, unknown> }]);
    expect(created.map(([key, options]) => [key, options.name])).to.deep.equal([
      [{ tenant_id: 1, seq: 1 }, 'tenant_id_1_seq_1'],
      [{ due_at: 1 }, 'due_at_1'],
      [{ email: 1 }, 'email_1_unique'],
    ]);
    // Sparse: a full index, no options. Unique: only over present, non-null values, as in SQLite.
    expect(created[1]![1]).to.deep.equal({ name: 'due_at_1' });
    expect(created[2]![1]).to.include({ unique: true });
    expect(Object.keys(created[2]![1].partialFilterExpression!)).to.deep.equal(['email']);
    await store.collection('entries').find({ where: { tenant_id: 't1' }, sort: { field: 'seq', direction: 'desc' }, index: 'tenant_id,seq' });
    expect(calls.find((call) => call.op === 'find')!.args[1]).to.deep.equal({ hint: { tenant_id: 1, seq: 1 } });
  });

  it('drops the indexes no longer declared before making the declared ones, and leaves what it did not name', async () => {
    const { client, calls, indexes } = standInClient({
      people: [
        { name: '_id_', key: { _id: 1 } },
        { name: 'email_1_unique', key: { email: 1 } },
        { name: 'team_1', key: { team: 1 } },
        { name: 'address.city_1', key: { 'address.city': 1 } },
        { name: 'operators_own', key: { notes: 1 } },
      ],
    });
    const store = new MongoReadStore(client, 'svc');
    // email no longer unique, team now compound with age, address.city gone.
    await store.ensureCollection({ name: 'people', indexes: [{ field: 'email' }, { field: 'team', then: ['age'] }] });
    expect(calls.map((call) => `${call.op} ${call.op === 'dropIndex' ? call.args[0] : (call.args[1] as { name: string }).name}`)).to.deep.equal([
      'dropIndex email_1_unique',
      'dropIndex team_1',
      'dropIndex address.city_1',
      'createIndex email_1',
      'createIndex team_1_age_1',
    ]);
    expect(indexes.get('people')!.map((index) => index.name)).to.deep.equal(['_id_', 'operators_own', 'email_1', 'team_1_age_1']);
    expect([...(await store.declaredFields('people'))].sort()).to.deep.equal(['age', 'email', 'team']);
  });
});
