// A BlobStore in memory, for suites that run before the file and S3 adapters are wired (the
// documents branch brings infrastructure/blob-store/files.ts, which replaces it). It keeps
// copies, so a caller changing its Buffer afterwards changes nothing stored.

import type { BlobStore, StoredBlob } from '../../application/ports/blob-store';

export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, StoredBlob>();

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    this.blobs.set(key, { bytes: Buffer.from(bytes), content_type: contentType });
  }

  async get(key: string): Promise<StoredBlob | null> {
    const blob = this.blobs.get(key);
    return blob ? { bytes: Buffer.from(blob.bytes), content_type: blob.content_type } : null;
  }

  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }

  has(key: string): boolean {
    return this.blobs.has(key);
  }
}
