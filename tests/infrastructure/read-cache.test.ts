import { expect } from 'chai';
import { ReadCache } from '../../infrastructure/read-store/read-cache';

describe('read cache of the embedded store', () => {
  // A real clock's time: lru-cache reads an entry stored at time 0 as one without a TTL.
  const START = 1_700_000_000_000;
  let now = START;
  let loads = 0;
  const load = (value: string) => () => {
    loads += 1;
    return { value, bytes: value.length * 2 };
  };
  beforeEach(() => {
    now = START;
    loads = 0;
  });

  it('answers from memory until a write to the collection invalidates it', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    expect(cache.read('users', 'get', 'k', load('a'))).to.equal('a');
    expect(cache.read('users', 'get', 'k', load('b'))).to.equal('a');
    cache.invalidate('sessions');
    expect(cache.read('users', 'get', 'k', load('c'))).to.equal('a');
    cache.invalidate('users');
    expect(cache.read('users', 'get', 'k', load('d'))).to.equal('d');
    expect(loads).to.equal(2);
  });

  it('keeps a written document as the answer to reads of its id; the write forgets the collection\'s queries only', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    cache.read('users', 'get', 'u1', load('u1 before'));
    cache.read('users', 'get', 'u2', load('u2'));
    cache.read('users', 'find', 'q', load('page before'));
    cache.wrote('users', 'u1', () => 'u1 written', 20);
    expect(cache.read('users', 'get', 'u1', load('read back'))).to.equal('u1 written');
    expect(cache.read('users', 'get', 'u2', load('read again'))).to.equal('u2');
    expect(cache.read('users', 'find', 'q', load('page after'))).to.equal('page after');
    cache.wrote('users', 'u3', () => null, 16);
    expect(cache.read('users', 'get', 'u3', load('read back'))).to.equal(null);
    // Forgetting the collection forgets written documents too.
    cache.invalidate('users');
    expect(cache.read('users', 'get', 'u1', load('u1 reloaded'))).to.equal('u1 reloaded');
    expect(loads).to.equal(5);
    const off = new ReadCache(0);
    off.wrote('users', 'u1', () => 'kept?', 10);
    expect(off.read('users', 'get', 'u1', load('loaded'))).to.equal('loaded');
  });

  it('keeps no written document of a collection never read by id, and forgets its queries all the same', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    let copies = 0;
    cache.read('entries', 'find', 'q', load('page before'));
    cache.wrote('entries', 'e1', () => {
      copies += 1;
      return 'e1 written';
    }, 20);
    expect(copies).to.equal(0);
    expect(cache.read('entries', 'find', 'q', load('page after'))).to.equal('page after');
    // Read by id once: from then on its writes are kept.
    expect(cache.read('entries', 'get', 'e1', load('e1 loaded'))).to.equal('e1 loaded');
    cache.wrote('entries', 'e1', () => 'e1 written again', 20);
    expect(cache.read('entries', 'get', 'e1', load('read back'))).to.equal('e1 written again');
    expect(loads).to.equal(3);
  });

  it('reads again after the TTL, for writes made by other processes', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    cache.read('users', 'get', 'k', load('a'));
    now = START + 1000;
    expect(cache.read('users', 'get', 'k', load('b'))).to.equal('a');
    now = START + 1001;
    expect(cache.read('users', 'get', 'k', load('c'))).to.equal('c');
  });

  it('forgets everything at once, and a collection again after each write to it', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    cache.read('users', 'get', 'k', load('a'));
    cache.read('sessions', 'find', 'q', load('b'));
    cache.invalidateAll();
    expect(cache.read('users', 'get', 'k', load('c'))).to.equal('c');
    expect(cache.read('sessions', 'find', 'q', load('d'))).to.equal('d');
    cache.invalidate('users');
    expect(cache.read('users', 'get', 'k', load('e'))).to.equal('e');
    cache.invalidate('users');
    expect(cache.read('users', 'get', 'k', load('f'))).to.equal('f');
    expect(cache.read('users', 'get', 'k', load('g'))).to.equal('f');
    expect(cache.read('sessions', 'find', 'q', load('h'))).to.equal('d');
  });

  it('keeps within its entry and size bounds, and is off with a TTL of 0', () => {
    const byCount = new ReadCache(1000, 2, 1 << 20, () => now);
    byCount.read('c', 'get', 'a', load('1'));
    byCount.read('c', 'get', 'b', load('2'));
    byCount.read('c', 'get', 'c', load('3'));
    expect(byCount.read('c', 'get', 'a', load('again'))).to.equal('again');
    const bySize = new ReadCache(1000, 100, 16 * 1024, () => now);
    bySize.read('c', 'get', 'big', load('x'.repeat(2000)));
    expect(bySize.read('c', 'get', 'big', load('fresh'))).to.equal('fresh');
    const acrossCollections = new ReadCache(1000, 2, 1 << 20, () => now);
    acrossCollections.read('c1', 'get', 'a', load('1'));
    acrossCollections.read('c2', 'get', 'b', load('2'));
    acrossCollections.read('c3', 'find', 'c', load('3'));
    expect(acrossCollections.read('c2', 'get', 'b', load('reloaded'))).to.equal('2');
    expect(acrossCollections.read('c1', 'get', 'a', load('reloaded'))).to.equal('reloaded');
    const byTotalSize = new ReadCache(1000, 100, 16 * 1024, () => now);
    for (let index = 0; index < 20; index += 1) byTotalSize.read('c', 'get', `k${index}`, load('y'.repeat(500)));
    expect(byTotalSize.read('c', 'get', 'k0', load('reloaded'))).to.equal('reloaded');
    expect(byTotalSize.read('c', 'get', 'k19', load('reloaded'))).to.equal('y'.repeat(500));
    byTotalSize.invalidate('c');
    for (let index = 0; index < 16; index += 1) byTotalSize.read('d', 'get', `k${index}`, load('z'.repeat(500)));
    expect(byTotalSize.read('d', 'get', 'k0', load('reloaded'))).to.equal('z'.repeat(500));
    const mixed = new ReadCache(1000, 100, 1 << 20, () => now);
    mixed.read('users', 'get', 'k', load('by id'));
    expect(mixed.read('users', 'find', 'k', load('by query'))).to.equal('by query');
    expect(mixed.read('users', 'get', 'k', load('again'))).to.equal('by id');
    const off = new ReadCache(0);
    off.read('c', 'get', 'k', load('a'));
    expect(off.read('c', 'get', 'k', load('b'))).to.equal('b');
  });
});
