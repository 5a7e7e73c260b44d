// The ReadStore contract, run against every adapter. Collections are unique per test so
// that it passes on a shared database.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  CheckpointConflictError,
  type Collection,
  type Document,
  type FindOptions,
  InvalidCursorError,
  LeaseLostError,
  type ProjectionState,
  type ReadStore,
  UndeclaredFieldError,
  UniqueConstraintError,
} from '../../application/ports/read-store';

export interface ReadStoreFixture {
  store: ReadStore;
  dispose(): Promise<void>;
}

interface Person extends Document {
  name: string;
  age: number;
  email?: string | null;
  team: string;
  active: boolean;
  address?: { city: string };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const uniqueName = (prefix: string): string => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;

function state(name: string, checkpoint: number, overrides: Partial<ProjectionState> = {}): ProjectionState {
  return { name, version: 1, checkpoint, status: 'running', error: null, updated_at: new Date(0).toISOString(), ...overrides };
}

export function readStoreContract(createFixture: () => Promise<ReadStoreFixture>): void {
  let fixture: ReadStoreFixture;
  let store: ReadStore;
  let name: string;
  let people: Collection<Person>;

  beforeEach(async () => {
    fixture = await createFixture();
    store = fixture.store;
    name = uniqueName('people');
    await store.ensureCollection({
      name,
      indexes: [{ field: 'age' }, { field: 'team' }, { field: 'active' }, { field: 'email', unique: true }, { field: 'address.city' }],
    });
    people = store.collection<Person>(name);
  });

  afterEach(async () => {
    await store.dropCollection(name);
    await fixture.dispose();
  });

  const seed = (count: number): Promise<Person[]> => seedInto(people, count);
  const seedInto = async (collection: Collection<Person>, count: number): Promise<Person[]> => {
    const docs = Array.from({ length: count }, (_, index) => ({
      id: `p${String(index).padStart(3, '0')}`,
      name: `Person ${index}`,
      age: 20 + (index % 7),
      team: index % 2 === 0 ? 'red' : 'blue',
      active: index % 3 !== 0,
      email: `p${index}@example.com`,
      address: { city: index % 4 === 0 ? 'Lyon' : 'Oslo' },
    }));
    for (const doc of docs) await collection.put(doc);
    return docs;
  };

  describe('documents by id', () => {
    it('puts, gets, patches and deletes', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 36, team: 'red', active: true });
      expect(await people.get('a')).to.deep.equal({ id: 'a', name: 'Ada', age: 36, team: 'red', active: true });
      const patched = await people.patch('a', { age: 37 });
      expect(patched).to.deep.include({ name: 'Ada', age: 37 });
      expect(await people.get('a')).to.deep.include({ age: 37 });
      expect(await people.patch('missing', { age: 1 })).to.equal(null);
      expect(await people.delete('a')).to.equal(true);
      expect(await people.delete('a')).to.equal(false);
      expect(await people.get('a')).to.equal(null);
    });

    it('finds a patched document by the declared fields it changed, and still by those it kept, in a collection and in a projection commit', async () => {
      await people.put({ id: 'p', name: 'Pat', age: 40, team: 'red', active: true, email: 'pat@example.com' });
      await people.patch('p', { age: 41, name: 'Pat B.' });
      expect((await people.find({ where: { age: 41 } })).items.map((doc) => doc.id)).to.deep.equal(['p']);
      expect((await people.find({ where: { age: 40 } })).items).to.deep.equal([]);
      expect((await people.find({ where: { email: 'pat@example.com' } })).items.map((doc) => doc.name)).to.deep.equal(['Pat B.']);
      const projection = uniqueName('projection');
      await store.commitProjection({ projection, expectedCheckpoint: 0, state: state(projection, 1), operations: [{ kind: 'patch', collection: name, id: 'p', changes: { email: 'pat.b@example.com' } }] });
      expect((await people.find({ where: { email: 'pat.b@example.com' } })).items.map((doc) => doc.id)).to.deep.equal(['p']);
      expect((await people.find({ where: { email: 'pat@example.com' } })).items).to.deep.equal([]);
      expect((await people.find({ where: { age: 41 } })).items.map((doc) => doc.id)).to.deep.equal(['p']);
    });

    it('replaces a whole document on put', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 36, team: 'red', active: true, email: 'ada@example.com' });
      await people.put({ id: 'a', name: 'Ada L.', age: 36, team: 'red', active: true });
      expect(await people.get('a')).to.deep.equal({ id: 'a', name: 'Ada L.', age: 36, team: 'red', active: true });
    });

    it('hands out copies: changing a returned document changes nothing stored', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 36, team: 'red', active: true, address: { city: 'Lyon' } });
      const got = (await people.get('a')) as Person;
      got.name = 'changed';
      (got.address as { city: string }).city = 'changed';
      const found = (await people.find({ where: { team: 'red' } })).items[0];
      found.age = 99;
      (found.address as { city: string }).city = 'changed too';
      expect(await people.get('a')).to.deep.equal({ id: 'a', name: 'Ada', age: 36, team: 'red', active: true, address: { city: 'Lyon' } });
      expect((await people.find({ where: { team: 'red' } })).items).to.deep.equal([{ id: 'a', name: 'Ada', age: 36, team: 'red', active: true, address: { city: 'Lyon' } }]);
    });

    it('hands out frozen documents on a shared read: the same as a copying read finds, unchangeable, and current after a write', async () => {
      const ada = { id: 'a', name: 'Ada', age: 36, team: 'red', active: true, address: { city: 'Lyon' } };
      await people.put(ada);
      const shared = (await people.find({ where: { team: 'red' }, shared: true })).items;
      expect(shared).to.deep.equal([ada]);
      expect(Object.isFrozen(shared[0]) && Object.isFrozen(shared[0].address)).to.equal(true);
      expect(() => {
        (shared[0].address as { city: string }).city = 'changed';
      }).to.throw(TypeError);
      // A copying read of the same query still gets a copy of its own.
      const copied = (await people.find({ where: { team: 'red' } })).items[0];
      copied.age = 99;
      expect(Object.isFrozen(copied)).to.equal(false);
      await people.patch('a', { age: 37 });
      expect((await people.find({ where: { team: 'red' }, shared: true })).items).to.deep.equal([{ ...ada, age: 37 }]);
    });
  });

  describe('queries', () => {
    it('finds by equality, range, in, ne, booleans and dotted fields', async () => {
      await seed(20);
      const ids = async (where: Parameters<Collection<Person>['find']>[0]): Promise<string[]> =>
        (await people.find({ ...where, limit: 100 })).items.map((p) => p.id);
      expect(await ids({ where: { team: 'red', age: 20 } })).to.deep.equal(['p000', 'p014']);
      expect(await ids({ where: { age: { gte: 25, lt: 27 } } })).to.deep.equal(['p005', 'p006', 'p012', 'p013', 'p019']);
      expect(await ids({ where: { age: { in: [21, 22] }, team: { ne: 'red' } } })).to.deep.equal(['p001', 'p009', 'p015']);
      expect((await ids({ where: { active: false } })).length).to.equal(7);
      expect(await ids({ where: { 'address.city': 'Lyon', team: 'red' } })).to.deep.equal(['p000', 'p004', 'p008', 'p012', 'p016']);
      await people.put({ id: 'q000', name: 'No email', age: 20, team: 'red', active: true, email: null });
      expect(await ids({ where: { email: { in: ['p1@example.com', null] } } })).to.deep.equal(['p001', 'q000']);
      await people.delete('q000');
      expect(await people.count({ team: 'blue' })).to.equal(10);
      expect(await people.count()).to.equal(20);
    });

    it('sorts by a field with id breaking ties, both directions', async () => {
      await seed(10);
      const ascending = (await people.find({ sort: { field: 'age', direction: 'asc' }, limit: 4 })).items;
      expect(ascending.map((p) => [p.age, p.id])).to.deep.equal([
        [20, 'p000'],
        [20, 'p007'],
        [21, 'p001'],
        [21, 'p008'],
      ]);
      const descending = (await people.find({ sort: { field: 'age', direction: 'desc' }, limit: 3 })).items;
      expect(descending.map((p) => [p.age, p.id])).to.deep.equal([
        [26, 'p006'],
        [25, 'p005'],
        [24, 'p004'],
      ]);
    });

    it('pages through every match exactly once with opaque cursors', async () => {
      await seed(23);
      for (const direction of ['asc', 'desc'] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await people.find({ where: { active: true }, sort: { field: 'age', direction }, limit: 4, cursor });
          seen.push(...page.items.map((p) => p.id));
          cursor = page.next_cursor ?? undefined;
          pages += 1;
        } while (cursor);
        const expected = (await people.find({ where: { active: true }, sort: { field: 'age', direction }, limit: 100 })).items.map((p) => p.id);
        expect(seen).to.deep.equal(expected);
        expect(new Set(seen).size).to.equal(15);
        expect(pages).to.equal(4);
      }
    });

    it('returns no cursor on the last page', async () => {
      await seed(3);
      expect((await people.find({ limit: 3 })).next_cursor).to.equal(null);
      expect((await people.find({ limit: 2 })).next_cursor).to.be.a('string');
    });

    it('rejects a cursor from another query and a malformed one', async () => {
      await seed(5);
      const page = await people.find({ where: { team: 'red' }, limit: 1 });
      expect(await rejection(people.find({ where: { team: 'blue' }, limit: 1, cursor: page.next_cursor! }))).to.be.instanceOf(InvalidCursorError);
      expect(await rejection(people.find({ cursor: 'not-a-cursor' }))).to.be.instanceOf(InvalidCursorError);
    });

    it('finds the same documents through the index it is told to read, and refuses an undeclared one', async () => {
      await seed(30);
      for (const direction of ['asc', 'desc'] as const) {
        const query = { where: { team: 'red', age: { lte: 23 } }, sort: { field: 'age', direction }, limit: 4 };
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await people.find({ ...query, index: 'age', cursor });
          seen.push(...page.items.map((p) => p.id));
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        const unhinted = (await people.find({ ...query, limit: 100 })).items.map((p) => p.id);
        expect(seen).to.deep.equal(unhinted);
        expect(seen.length).to.equal(9);
      }
      expect(await rejection(people.find({ where: { team: 'red' }, index: 'name' }))).to.be.instanceOf(UndeclaredFieldError);
    });

    it('refuses filters and sorts on undeclared fields', async () => {
      expect(await rejection(people.find({ where: { name: 'Ada' } }))).to.be.instanceOf(UndeclaredFieldError);
      expect(await rejection(people.find({ sort: { field: 'name', direction: 'asc' } }))).to.be.instanceOf(UndeclaredFieldError);
    });
  });

  describe('compound and sparse indexes', () => {
    const queues = () => uniqueName('queue');
    const pagesOf = async (collection: Collection<Person>, options: FindOptions): Promise<string[]> => {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await collection.find({ ...options, cursor });
        seen.push(...page.items.map((item) => item.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return seen;
    };

    it('reads a compound index in its order, through its key as a hint too; each of its fields is declared', async () => {
      const queue = queues();
      await store.ensureCollection({ name: queue, indexes: [{ field: 'team', then: ['age'] }] });
      const items = store.collection<Person>(queue);
      await seedInto(items, 30);
      for (const direction of ['asc', 'desc'] as const) {
        const query = { where: { team: 'red' }, sort: { field: 'age', direction }, limit: 4 };
        const unhinted = await pagesOf(items, query);
        expect(await pagesOf(items, { ...query, index: 'team,age' })).to.deep.equal(unhinted);
        expect(unhinted).to.have.length(15);
        const ages = await Promise.all(unhinted.map(async (id) => (await items.get(id))!.age));
        expect(ages).to.deep.equal([...ages].sort((a, b) => (direction === 'asc' ? a - b : b - a)));
      }
      expect(await items.count({ age: 20 })).to.equal(5);
      expect(await rejection(items.find({ where: { team: 'red' }, index: 'team,name' }))).to.be.instanceOf(UndeclaredFieldError);
      await store.dropCollection(queue);
    });

    it('finds the same documents through a sparse index as without it, nulls and absent values included', async () => {
      const queue = queues();
      await store.ensureCollection({ name: queue, indexes: [{ field: 'due', sparse: true }, { field: 'team' }] });
      const items = store.collection<Person & { due?: string | null }>(queue);
      await items.put({ id: 'a', name: 'A', age: 1, team: 'red', active: true, due: '2026-01-02' });
      await items.put({ id: 'b', name: 'B', age: 1, team: 'red', active: true, due: null });
      await items.put({ id: 'c', name: 'C', age: 1, team: 'red', active: true });
      await items.put({ id: 'd', name: 'D', age: 1, team: 'blue', active: true, due: '2026-01-01' });
      const due = { where: { due: { lte: '2026-01-05' } }, sort: { field: 'due', direction: 'asc' as const } };
      expect((await items.find(due)).items.map((item) => item.id)).to.deep.equal(['d', 'a']);
      expect((await items.find({ ...due, index: 'due' })).items.map((item) => item.id)).to.deep.equal(['d', 'a']);
      expect((await items.find({ where: { due: null } })).items.map((item) => item.id)).to.deep.equal(['b', 'c']);
      // Told to read the sparse index without asking for a value of its field: the same documents.
      expect((await items.find({ where: { due: null }, index: 'due' })).items.map((item) => item.id)).to.deep.equal(['b', 'c']);
      expect((await items.find({ where: { team: 'red' }, sort: { field: 'due', direction: 'asc' }, index: 'due' })).items.map((item) => item.id)).to.deep.equal(['b', 'c', 'a']);
      // Out of the index and back: a value set, then cleared.
      await items.patch('b', { due: '2026-01-03' });
      await items.patch('a', { due: null });
      expect((await items.find({ ...due, index: 'due' })).items.map((item) => item.id)).to.deep.equal(['d', 'b']);
      expect(await items.count({ due: null })).to.equal(2);
      await store.dropCollection(queue);
    });

    it('makes the indexes the spec lists: one no longer listed is dropped, and its field is no longer declared', async () => {
      await seed(3);
      await store.ensureCollection({ name, indexes: [{ field: 'team', then: ['age'] }, { field: 'email', unique: true }] });
      expect(await people.count({ team: 'red', age: 20 })).to.equal(1);
      expect(await rejection(people.find({ where: { active: true } }))).to.be.instanceOf(UndeclaredFieldError);
      expect(await rejection(people.find({ where: { team: 'red' }, index: 'age' }))).to.be.an('error');
      expect(await people.get('p000')).to.deep.include({ name: 'Person 0' });
    });
  });

  describe('unique indexes', () => {
    it('rejects a duplicate value and keeps the first document', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 1, team: 'red', active: true, email: 'same@example.com' });
      const error = await rejection(people.put({ id: 'b', name: 'Bob', age: 1, team: 'red', active: true, email: 'same@example.com' }));
      expect(error).to.be.instanceOf(UniqueConstraintError);
      expect((error as UniqueConstraintError).field).to.equal('email');
      expect(await people.get('b')).to.equal(null);
    });

    it('allows many documents without a value', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 1, team: 'red', active: true });
      await people.put({ id: 'b', name: 'Bob', age: 1, team: 'red', active: true, email: null });
      await people.put({ id: 'c', name: 'Cy', age: 1, team: 'red', active: true });
      expect(await people.count()).to.equal(3);
    });

    it('is idempotent to declare again', async () => {
      await people.put({ id: 'a', name: 'Ada', age: 1, team: 'red', active: true, email: 'x@example.com' });
      await store.ensureCollection({ name, indexes: [{ field: 'age' }, { field: 'email', unique: true }] });
      expect(await people.get('a')).to.deep.include({ email: 'x@example.com' });
    });
  });

  describe('projection commits', () => {
    it('applies the operations and the checkpoint together', async () => {
      const projection = uniqueName('projection');
      await people.put({ id: 'gone', name: 'Gone', age: 1, team: 'red', active: true });
      await people.put({ id: 'patched', name: 'Pat', age: 1, team: 'red', active: true });
      await store.commitProjection({
        projection,
        expectedCheckpoint: 0,
        state: state(projection, 42),
        operations: [
          { kind: 'put', collection: name, doc: { id: 'new', name: 'New', age: 2, team: 'blue', active: false } },
          { kind: 'patch', collection: name, id: 'patched', changes: { age: 3 } },
          { kind: 'delete', collection: name, id: 'gone' },
        ],
      });
      expect(await people.get('new')).to.deep.include({ name: 'New' });
      expect(await people.get('patched')).to.deep.include({ age: 3 });
      expect(await people.get('gone')).to.equal(null);
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 42, status: 'running' });
      expect((await store.listProjectionStates()).map((s) => s.name)).to.include(projection);
    });

    it('deletes the documents whose fields equal the given values, as the batch\'s earlier writes left them; a later write stands', async () => {
      const projection = uniqueName('projection');
      await seed(10);
      const red = (id: string, active: boolean) => ({ id, name: id, age: 1, team: 'red', active });
      await store.commitProjection({
        projection,
        expectedCheckpoint: 0,
        state: state(projection, 5),
        operations: [
          { kind: 'put', collection: name, doc: red('new-red', true) },
          { kind: 'patch', collection: name, id: 'p001', changes: { team: 'red' } },
          { kind: 'patch', collection: name, id: 'p002', changes: { team: 'blue' } },
          { kind: 'deleteWhere', collection: name, where: { team: 'red', active: true } },
          { kind: 'put', collection: name, doc: red('after', true) },
          { kind: 'patch', collection: name, id: 'p004', changes: { name: 'patched after its deletion' } },
        ],
      });
      const left = (await people.find({ sort: { field: 'id', direction: 'asc' }, limit: 100 })).items;
      // Red and active before the delete: p004 and p008 as stored, p001 by its patch, new-red by its put.
      expect(left.map((person) => person.id)).to.deep.equal(['after', 'p000', 'p002', 'p003', 'p005', 'p006', 'p007', 'p009']);
      expect(await people.get('p004')).to.equal(null);
      expect(await people.get('p002')).to.deep.include({ team: 'blue', active: true });
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 5 });
    });

    it('deletes by a dotted field, by several, and nothing when none matches', async () => {
      const projection = uniqueName('projection');
      await seed(8);
      await store.commitProjection({
        projection,
        expectedCheckpoint: 0,
        state: state(projection, 2),
        operations: [
          { kind: 'deleteWhere', collection: name, where: { 'address.city': 'Lyon', team: 'red' } },
          { kind: 'deleteWhere', collection: name, where: { team: 'green' } },
        ],
      });
      // Lyon: p000 and p004, both red.
      expect((await people.find({ limit: 100 })).items.map((person) => person.id)).to.deep.equal(['p001', 'p002', 'p003', 'p005', 'p006', 'p007']);
    });

    it('deletes by fields in a collection without a unique index, where a batch\'s writes to one document may be folded', async () => {
      const projection = uniqueName('projection');
      const threads = uniqueName('threads');
      await store.ensureCollection({ name: threads, indexes: [{ field: 'thread' }] });
      try {
        const messages = store.collection(threads);
        await messages.put({ id: 'stored', thread: 't1', text: 'stored' });
        await messages.put({ id: 'elsewhere', thread: 't2', text: 'kept' });
        await store.commitProjection({
          projection,
          expectedCheckpoint: 0,
          state: state(projection, 3),
          operations: [
            { kind: 'put', collection: threads, doc: { id: 'written', thread: 't1', text: 'first' } },
            { kind: 'patch', collection: threads, id: 'stored', changes: { text: 'changed' } },
            { kind: 'deleteWhere', collection: threads, where: { thread: 't1' } },
            { kind: 'put', collection: threads, doc: { id: 'written', thread: 't1', text: 'again' } },
            { kind: 'patch', collection: threads, id: 'written', changes: { read: true } },
            { kind: 'patch', collection: threads, id: 'stored', changes: { text: 'too late' } },
          ],
        });
        expect((await messages.find({ limit: 100 })).items).to.deep.equal([
          { id: 'elsewhere', thread: 't2', text: 'kept' },
          { id: 'written', thread: 't1', text: 'again', read: true },
        ]);
      } finally {
        await store.dropCollection(threads);
      }
    });

    it('patches the documents whose fields equal the given values, as the batch\'s earlier writes left them; a later write stands', async () => {
      const projection = uniqueName('projection');
      await seed(6);
      await store.commitProjection({
        projection,
        expectedCheckpoint: 0,
        state: state(projection, 6),
        operations: [
          { kind: 'put', collection: name, doc: { id: 'new-red', name: 'New', age: 1, team: 'red', active: true } },
          { kind: 'patch', collection: name, id: 'p001', changes: { team: 'red' } },
          { kind: 'patch', collection: name, id: 'p004', changes: { team: 'blue' } },
          { kind: 'patchWhere', collection: name, where: { team: 'red', active: true }, changes: { name: 'scrubbed', age: 0 } },
          { kind: 'patch', collection: name, id: 'p001', changes: { age: 7 } },
          { kind: 'put', collection: name, doc: { id: 'after', name: 'After', age: 1, team: 'red', active: true } },
        ],
      });
      const byId = new Map((await people.find({ limit: 100 })).items.map((person) => [person.id, person]));
      // Red and active before the patch: p002 as stored, p001 by its patch, new-red by its put (p004 no longer red by its patch, p000 inactive).
      for (const id of ['p002', 'new-red']) expect(byId.get(id), id).to.deep.include({ name: 'scrubbed', age: 0, team: 'red' });
      expect(byId.get('p001')).to.deep.include({ name: 'scrubbed', age: 7 });
      expect(byId.get('p004')).to.deep.include({ name: 'Person 4', team: 'blue' });
      expect(byId.get('after')).to.deep.include({ name: 'After' });
      for (const id of ['p000', 'p003', 'p005']) expect(byId.get(id)?.name, id).to.equal(`Person ${Number(id.slice(1))}`);
      // The declared fields it changed are queried as changed.
      expect((await people.find({ where: { age: 0 }, limit: 100 })).items.map((person) => person.id).sort()).to.deep.equal(['new-red', 'p002']);
    });

    for (const where of [
      { kind: 'deleteWhere', collection: '', where: { name: 'Person 0' } },
      { kind: 'patchWhere', collection: '', where: { name: 'Person 0' }, changes: { age: 9 } },
    ] as const) {
      it(`applies nothing when a ${where.kind} names an undeclared field`, async () => {
        const projection = uniqueName('projection');
        await seed(2);
        const error = await rejection(
          store.commitProjection({
            projection,
            expectedCheckpoint: 0,
            state: state(projection, 4),
            operations: [{ kind: 'put', collection: name, doc: { id: 'x', name: 'X', age: 1, team: 'red', active: true } }, { ...where, collection: name }],
          }),
        );
        expect(error).to.be.instanceOf(UndeclaredFieldError);
        expect(await people.get('x')).to.equal(null);
        expect(await people.get('p000')).to.deep.include({ name: 'Person 0', age: 20 });
        expect(await store.getProjectionState(projection)).to.equal(null);
      });
    }

    it('applies nothing when the stored checkpoint moved on', async () => {
      const projection = uniqueName('projection');
      await store.putProjectionState(state(projection, 10));
      const error = await rejection(
        store.commitProjection({
          projection,
          expectedCheckpoint: 5,
          state: state(projection, 12),
          operations: [{ kind: 'put', collection: name, doc: { id: 'x', name: 'X', age: 1, team: 'red', active: true } }],
        }),
      );
      expect(error).to.be.instanceOf(CheckpointConflictError);
      expect(await people.get('x')).to.equal(null);
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 10 });
    });

    it('settles commits made at once each on its own: a refused one leaves the others applied', async () => {
      const [first, refused, third] = [uniqueName('projection'), uniqueName('projection'), uniqueName('projection')];
      await store.putProjectionState(state(refused, 10));
      const put = (id: string) => ({ kind: 'put' as const, collection: name, doc: { id, name: id, age: 1, team: 'red', active: true } });
      const outcomes = await Promise.allSettled([
        store.commitProjection({ projection: first, expectedCheckpoint: 0, state: state(first, 7), operations: [put('one')] }),
        store.commitProjection({ projection: refused, expectedCheckpoint: 5, state: state(refused, 12), operations: [put('two')] }),
        store.commitProjection({ projection: third, expectedCheckpoint: 0, state: state(third, 9), operations: [put('three')] }),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(CheckpointConflictError);
      expect(await people.get('one')).to.deep.include({ name: 'one' });
      expect(await people.get('two')).to.equal(null);
      expect(await people.get('three')).to.deep.include({ name: 'three' });
      expect(await store.getProjectionState(first)).to.deep.include({ checkpoint: 7 });
      expect(await store.getProjectionState(refused)).to.deep.include({ checkpoint: 10 });
      expect(await store.getProjectionState(third)).to.deep.include({ checkpoint: 9 });
    });

    it('applies nothing when one operation violates a unique index', async () => {
      const projection = uniqueName('projection');
      await people.put({ id: 'a', name: 'Ada', age: 1, team: 'red', active: true, email: 'taken@example.com' });
      const error = await rejection(
        store.commitProjection({
          projection,
          expectedCheckpoint: 0,
          state: state(projection, 3),
          operations: [
            { kind: 'put', collection: name, doc: { id: 'b', name: 'Bob', age: 1, team: 'red', active: true } },
            { kind: 'put', collection: name, doc: { id: 'c', name: 'Cy', age: 1, team: 'red', active: true, email: 'taken@example.com' } },
          ],
        }),
      );
      expect(error).to.be.instanceOf(UniqueConstraintError);
      expect(await people.get('b')).to.equal(null);
      expect(await store.getProjectionState(projection)).to.equal(null);
    });

    it('promotes a rebuilt shadow collection in place of the live one', async () => {
      const projection = uniqueName('projection');
      const shadow = `${name}_shadow`;
      await people.put({ id: 'old', name: 'Old', age: 1, team: 'red', active: true });
      await store.ensureCollection({ name: shadow, indexes: [{ field: 'team' }] });
      await store.collection<Person>(shadow).put({ id: 'rebuilt', name: 'Rebuilt', age: 2, team: 'blue', active: true });
      await store.promoteShadow({ projection, collections: [{ shadow, live: name }], state: state(projection, 99, { version: 2 }) });
      expect(await people.get('old')).to.equal(null);
      expect((await people.find({ where: { team: 'blue' } })).items.map((p) => p.id)).to.deep.equal(['rebuilt']);
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 99, version: 2 });
      await store.ensureCollection({ name: shadow, indexes: [{ field: 'team' }] });
      expect(await store.collection(shadow).count({ team: 'blue' })).to.equal(0);
      await store.dropCollection(shadow);
    });
  });

  describe('leases', () => {
    const at = (seconds: number): Date => new Date(Date.UTC(2026, 10, 22, 10, 0, seconds));
    const ttlMs = 10_000;
    let projection: string;
    beforeEach(() => {
      projection = uniqueName('leased');
    });

    it('gives a free lease to the first holder, with a state to hold it in', async () => {
      const lease = await store.acquireLease({ projection, holder: 'a', version: 3, now: at(0), ttlMs });
      expect(lease).to.deep.equal({ holder: 'a', expires_at: at(10).toISOString() });
      expect(await store.getProjectionState(projection)).to.deep.include({ name: projection, version: 3, checkpoint: 0, status: 'stopped', lease });
    });

    it('refuses a live lease to another holder and names the holder; gives it again to its own', async () => {
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      expect(await store.acquireLease({ projection, holder: 'b', version: 1, now: at(9), ttlMs })).to.deep.equal({ holder: 'a', expires_at: at(10).toISOString() });
      expect(await store.acquireLease({ projection, holder: 'a', version: 1, now: at(5), ttlMs })).to.deep.equal({ holder: 'a', expires_at: at(15).toISOString() });
    });

    it('gives a live lease to a holder replacing the one that has it (known gone), and to no one replacing another', async () => {
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      expect(await store.acquireLease({ projection, holder: 'c', version: 1, now: at(1), ttlMs, replacing: 'b' })).to.deep.equal({ holder: 'a', expires_at: at(10).toISOString() });
      expect(await store.acquireLease({ projection, holder: 'c', version: 1, now: at(2), ttlMs, replacing: 'a' })).to.deep.equal({ holder: 'c', expires_at: at(12).toISOString() });
      expect(await store.renewLease({ projection, holder: 'a', now: at(3), ttlMs })).to.deep.equal({ holder: 'c', expires_at: at(12).toISOString() });
    });

    it('hands a lapsed lease to another holder, who then fences the old one off', async () => {
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      expect(await store.acquireLease({ projection, holder: 'b', version: 1, now: at(10), ttlMs })).to.deep.equal({ holder: 'b', expires_at: at(20).toISOString() });
      expect(await store.renewLease({ projection, holder: 'a', now: at(11), ttlMs })).to.deep.equal({ holder: 'b', expires_at: at(20).toISOString() });
      const error = await rejection(
        store.commitProjection({
          projection,
          holder: 'a',
          expectedCheckpoint: 0,
          state: state(projection, 5),
          operations: [{ kind: 'put', collection: name, doc: { id: 'late', name: 'Late', age: 1, team: 'red', active: true } }],
        }),
      );
      expect(error).to.be.instanceOf(LeaseLostError);
      expect(error).to.deep.include({ projection, holder: 'a', actual: 'b' });
      // The lease is checked before the checkpoint: the loser stands by instead of reloading.
      expect(await rejection(store.commitProjection({ projection, holder: 'a', expectedCheckpoint: 3, state: state(projection, 5), operations: [] }))).to.be.instanceOf(LeaseLostError);
      expect(await people.get('late')).to.equal(null);
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 0 });
      expect(await rejection(store.putProjectionState(state(projection, 5, { status: 'failed' }), { holder: 'a' }))).to.be.instanceOf(LeaseLostError);
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 0, status: 'stopped' });
    });

    it('renews only its holder\'s lease, even lapsed while nobody took it', async () => {
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      expect(await store.renewLease({ projection, holder: 'a', now: at(12), ttlMs })).to.deep.equal({ holder: 'a', expires_at: at(22).toISOString() });
      expect(await store.renewLease({ projection, holder: 'b', now: at(13), ttlMs })).to.deep.equal({ holder: 'a', expires_at: at(22).toISOString() });
      expect(await store.renewLease({ projection: uniqueName('unknown'), holder: 'a', now: at(13), ttlMs })).to.equal(null);
    });

    it('lets the holder commit batches, and keeps the lease through commits and state writes', async () => {
      const lease = await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      await store.commitProjection({
        projection,
        holder: 'a',
        expectedCheckpoint: 0,
        state: state(projection, 7),
        operations: [{ kind: 'put', collection: name, doc: { id: 'p', name: 'P', age: 1, team: 'red', active: true } }],
      });
      await store.putProjectionState(state(projection, 7, { status: 'failed', error: 'boom', lease: null }), { holder: 'a' });
      expect(await people.get('p')).to.deep.include({ name: 'P' });
      expect(await store.getProjectionState(projection)).to.deep.include({ checkpoint: 7, status: 'failed', error: 'boom', lease });
      expect((await store.listProjectionStates()).find((listed) => listed.name === projection)).to.deep.include({ lease });
    });

    it('releases only its holder\'s lease, so another takes it at once', async () => {
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      await store.releaseLease(projection, 'b');
      expect((await store.getProjectionState(projection))?.lease).to.deep.include({ holder: 'a' });
      await store.releaseLease(projection, 'a');
      expect((await store.getProjectionState(projection))?.lease).to.equal(null);
      expect(await store.acquireLease({ projection, holder: 'b', version: 1, now: at(1), ttlMs })).to.deep.include({ holder: 'b' });
    });

    it('gives the lease to exactly one of many holders trying at once', async () => {
      const holders = Array.from({ length: 8 }, (_, index) => `h${index}`);
      const leases = await Promise.all(holders.map((holder) => store.acquireLease({ projection, holder, version: 1, now: at(0), ttlMs })));
      const winners = new Set(leases.map((lease) => lease?.holder));
      expect(winners.size, JSON.stringify(leases)).to.equal(1);
      expect(holders).to.include([...winners][0]);
    });

    it('fences a shadow promotion by the holder', async () => {
      const shadow = `${name}_shadow`;
      await store.ensureCollection({ name: shadow, indexes: [{ field: 'team' }] });
      await store.acquireLease({ projection, holder: 'a', version: 1, now: at(0), ttlMs });
      await store.acquireLease({ projection, holder: 'b', version: 1, now: at(20), ttlMs });
      const error = await rejection(store.promoteShadow({ projection, collections: [{ shadow, live: name }], state: state(projection, 9, { version: 2 }), holder: 'a' }));
      expect(error).to.be.instanceOf(LeaseLostError);
      expect(await store.getProjectionState(projection)).to.deep.include({ version: 1, checkpoint: 0 });
      await store.promoteShadow({ projection, collections: [{ shadow, live: name }], state: state(projection, 9, { version: 2 }), holder: 'b' });
      expect(await store.getProjectionState(projection)).to.deep.include({ version: 2, checkpoint: 9, lease: { holder: 'b', expires_at: at(30).toISOString() } });
    });

    it('reads no lease on a state that never had one', async () => {
      await store.putProjectionState(state(projection, 1));
      expect((await store.getProjectionState(projection))?.lease).to.equal(null);
    });
  });

  it('answers a ping', async () => {
    expect(await store.ping()).to.equal(true);
  });
}
