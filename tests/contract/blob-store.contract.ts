// The BlobStore contract, run against every adapter: the bytes and content type put under a key
// come back unchanged, a put replaces, a missing key is null, and deleting is idempotent. Keys
// are unique per test so that it passes on a shared bucket.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { BlobStore } from '../../application/ports/blob-store';

export interface BlobStoreFixture {
  store: BlobStore;
  dispose(): Promise<void>;
}

export function blobStoreContract(createFixture: () => Promise<BlobStoreFixture>): void {
  let fixture: BlobStoreFixture;
  let tenant: string;

  beforeEach(async () => {
    fixture = await createFixture();
    tenant = `test-${randomUUID()}`;
  });
  afterEach(() => fixture.dispose());

  it('gives back the bytes and content type put under a key', async () => {
    const key = `${tenant}/${randomUUID()}`;
    const bytes = Buffer.from('%PDF-1.4 a small document\n', 'latin1');
    await fixture.store.put(key, bytes, 'application/pdf');
    const blob = await fixture.store.get(key);
    expect(blob).to.not.equal(null);
    expect(blob!.bytes.equals(bytes)).to.equal(true);
    expect(blob!.content_type).to.equal('application/pdf');
  });

  it('keeps every byte value, and an empty blob, exactly', async () => {
    const all = Buffer.from(Array.from({ length: 512 }, (_, index) => index % 256));
    await fixture.store.put(`${tenant}/binary`, all, 'application/octet-stream');
    await fixture.store.put(`${tenant}/empty`, Buffer.alloc(0), 'text/plain');
    expect((await fixture.store.get(`${tenant}/binary`))!.bytes.equals(all)).to.equal(true);
    const empty = await fixture.store.get(`${tenant}/empty`);
    expect(empty!.bytes.length).to.equal(0);
    expect(empty!.content_type).to.equal('text/plain');
  });

  it('replaces what was under the key', async () => {
    const key = `${tenant}/doc`;
    await fixture.store.put(key, Buffer.from('first'), 'text/plain');
    await fixture.store.put(key, Buffer.from('<p>second</p>'), 'text/html');
    const blob = await fixture.store.get(key);
    expect(blob!.bytes.toString()).to.equal('<p>second</p>');
    expect(blob!.content_type).to.equal('text/html');
  });

  it('answers null for a key with nothing under it', async () => {
    expect(await fixture.store.get(`${tenant}/never-put`)).to.equal(null);
  });

  it('deletes, and deleting what is not there is nothing', async () => {
    const key = `${tenant}/gone`;
    await fixture.store.put(key, Buffer.from('bytes'), 'text/plain');
    await fixture.store.delete(key);
    expect(await fixture.store.get(key)).to.equal(null);
    await fixture.store.delete(key);
    await fixture.store.delete(`${tenant}/never-put`);
  });

  it('keeps keys apart, including keys that differ only in characters a path would treat specially', async () => {
    const keys = [`${tenant}/a`, `${tenant}/a.b`, `${tenant}/a%2Eb`, `${tenant}/a b`, `${tenant}/é`, `${tenant}/x/y`, `${tenant}/x%2Fy`];
    for (const [index, key] of keys.entries()) await fixture.store.put(key, Buffer.from(`blob ${index}`), 'text/plain');
    for (const [index, key] of keys.entries()) expect((await fixture.store.get(key))!.bytes.toString(), key).to.equal(`blob ${index}`);
    await fixture.store.delete(`${tenant}/a`);
    expect(await fixture.store.get(`${tenant}/a`)).to.equal(null);
    expect((await fixture.store.get(`${tenant}/a.b`))!.bytes.toString()).to.equal('blob 1');
  });
}
