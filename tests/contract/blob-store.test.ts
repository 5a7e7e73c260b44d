import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { FileBlobStore } from '../../infrastructure/blob-store/files';
import { S3BlobStore } from '../../infrastructure/blob-store/s3';
import { temporaryDirectory } from '../support/files';
import { type LocalS3Server, startLocalS3Server } from '../support/s3-server';
import { blobStoreContract } from './blob-store.contract';

/** Every file under `root`, relative to it. */
function filesUnder(root: string): string[] {
  if (!fs.existsSync(root)) return [];
  return fs.readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

describe('BlobStore contract: files under DATA_DIR/blobs', () => {
  blobStoreContract(async () => {
    const dir = temporaryDirectory();
    return { store: new FileBlobStore(path.join(dir.path, 'blobs')), dispose: async () => dir.remove() };
  });

  describe('on disk', () => {
    let dir: ReturnType<typeof temporaryDirectory>;
    let store: FileBlobStore;
    beforeEach(() => {
      dir = temporaryDirectory();
      store = new FileBlobStore(path.join(dir.path, 'data', 'blobs'));
    });
    afterEach(() => dir.remove());

    it('never writes outside its folder, whatever the key says', async () => {
      for (const key of ['../escape', 'tenant/../../escape', './x', '/abs', 'a/..']) {
        await store.put(key.startsWith('/') ? key.slice(1) : key, Buffer.from(key), 'text/plain');
      }
      expect(filesUnder(dir.path).every((file) => file.startsWith(path.join('data', 'blobs') + path.sep)), filesUnder(dir.path).join(', ')).to.equal(true);
      expect((await store.get('../escape'))!.bytes.toString()).to.equal('../escape');
      expect(fs.existsSync(path.join(dir.path, 'data', 'escape'))).to.equal(false);
    });

    it('refuses a key with an empty segment', async () => {
      for (const key of ['', 'tenant//doc', 'tenant/']) {
        let refused: unknown = null;
        await store.put(key, Buffer.from('x'), 'text/plain').catch((error: unknown) => (refused = error));
        expect(refused, JSON.stringify(key)).to.be.instanceOf(Error);
      }
    });

    it('writes through a temporary file renamed into place: none is left behind, and a file is private to the process owner', async () => {
      await store.put('tenant/doc', Buffer.from('one'), 'text/plain');
      await store.put('tenant/doc', Buffer.from('two'), 'text/plain');
      const files = filesUnder(store.directory);
      expect(files).to.deep.equal([path.join('tenant', 'doc')]);
      expect(fs.statSync(path.join(store.directory, 'tenant', 'doc')).mode & 0o777).to.equal(0o600);
    });

    it('refuses to read a file that is not a blob of this format', async () => {
      fs.mkdirSync(path.join(store.directory, 'tenant'), { recursive: true });
      fs.writeFileSync(path.join(store.directory, 'tenant', 'doc'), 'not a blob');
      let refused: unknown = null;
      await store.get('tenant/doc').catch((error: unknown) => (refused = error));
      expect(String(refused)).to.contain('has no header');
    });
  });
});

describe('BlobStore contract: S3 (a local server speaking S3, path-style)', () => {
  let server: LocalS3Server;
  before(async () => {
    server = await startLocalS3Server();
  });
  after(() => server.close());

  const storeOn = (s3: LocalS3Server, overrides: { secretAccessKey?: string } = {}): S3BlobStore =>
    new S3BlobStore({
      bucket: s3.bucket,
      endpoint: s3.url,
      region: s3.region,
      credentials: { accessKeyId: s3.credentials.accessKeyId, secretAccessKey: overrides.secretAccessKey ?? s3.credentials.secretAccessKey },
      forcePathStyle: true,
    });

  blobStoreContract(async () => {
    const store = storeOn(server);
    return { store, dispose: async () => store.close() };
  });

  it('signs every request with the configured credentials, addresses the bucket in the path, and sends the content type', async () => {
    const store = storeOn(server);
    const before = server.requests.length;
    await store.put('tenant-1/doc-1', Buffer.from('hello'), 'text/markdown');
    await store.get('tenant-1/doc-1');
    await store.delete('tenant-1/doc-1');
    store.close();
    const made = server.requests.slice(before);
    expect(made.map((request) => `${request.method} ${request.path}`)).to.deep.equal(['PUT /documents/tenant-1/doc-1', 'GET /documents/tenant-1/doc-1', 'DELETE /documents/tenant-1/doc-1']);
    expect(made[0].headers['content-type']).to.equal('text/markdown');
    expect(made.every((request) => String(request.headers.authorization).startsWith(`AWS4-HMAC-SHA256 Credential=${server.credentials.accessKeyId}/`))).to.equal(true);
    expect(server.objects.has('tenant-1/doc-1')).to.equal(false);
  });

  it('fails loudly on a wrong secret (403 SignatureDoesNotMatch), never answering as if the blob were missing', async () => {
    const store = storeOn(server, { secretAccessKey: 'not the secret' });
    const key = `tenant/${randomUUID()}`;
    let refused: unknown = null;
    await store.get(key).catch((error: unknown) => (refused = error));
    expect((refused as { name?: string } | null)?.name).to.equal('SignatureDoesNotMatch');
    refused = null;
    await store.put(key, Buffer.from('x'), 'text/plain').catch((error: unknown) => (refused = error));
    expect((refused as { name?: string } | null)?.name).to.equal('SignatureDoesNotMatch');
    expect(server.objects.has(key)).to.equal(false);
    store.close();
  });

  it('retries a 500 from the server, as the client does for S3', async () => {
    const store = storeOn(server);
    server.failNext(1);
    await store.put('tenant/retried', Buffer.from('kept'), 'text/plain');
    expect(server.objects.get('tenant/retried')!.bytes.toString()).to.equal('kept');
    store.close();
  });
});
