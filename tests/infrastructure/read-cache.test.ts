import { expect } from 'chai';
import { ReadCache } from '../../infrastructure/read-store/read-cache';

describe('read cache of the embedded store', () => {
  let now = 0;
  let loads = 0;
  const load = (value: string) => () => {
    loads += 1;
    return { value, bytes: value.length * 2 };
  };
  beforeEach(() => {
    now = 0;
    loads = 0;
  });

  it('answers from memory until a write to the collection invalidates it', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    expect(cache.read('users', 'k', load('a'))).to.equal('a');
    expect(cache.read('users', 'k', load('b'))).to.equal('a');
    cache.invalidate('sessions');
    expect(cache.read('users', 'k', load('c'))).to.equal('a');
    cache.invalidate('users');
    expect(cache.read('users', 'k', load('d'))).to.equal('d');
    expect(loads).to.equal(2);
  });

  it('reads again after the TTL, for writes made by other processes', () => {
    const cache = new ReadCache(1000, 100, 1 << 20, () => now);
    cache.read('users', 'k', load('a'));
    now = 999;
    expect(cache.read('users', 'k', load('b'))).to.equal('a');
    now = 1000;
    expect(cache.read('users', 'k', load('c'))).to.equal('c');
  });

  it('keeps within its entry and size bounds, and is off with a TTL of 0', () => {
    const byCount = new ReadCache(1000, 2, 1 << 20, () => now);
    byCount.read('c', 'a', load('1'));
    byCount.read('c', 'b', load('2'));
    byCount.read('c', 'c', load('3'));
    expect(byCount.read('c', 'a', load('again'))).to.equal('again');
    const bySize = new ReadCache(1000, 100, 16 * 1024, () => now);
    bySize.read('c', 'big', load('x'.repeat(2000)));
    expect(bySize.read('c', 'big', load('fresh'))).to.equal('fresh');
    const off = new ReadCache(0);
    off.read('c', 'k', load('a'));
    expect(off.read('c', 'k', load('b'))).to.equal('b');
  });
});
