// The blob store port: the original bytes of documents. Embedded: files under DATA_DIR
// (infrastructure/blob-store/files.ts); an S3-compatible bucket when configured
// (infrastructure/blob-store/s3.ts). Keys are made by the platform (`<tenant>/<document>`),
// never from a user's file name.

export interface StoredBlob {
  bytes: Buffer;
  content_type: string;
}

export interface BlobStore {
  /** Stores the bytes under `key`, replacing what was there. */
  put(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The bytes under `key`; null when there are none. */
  get(key: string): Promise<StoredBlob | null>;
  /** Removes the bytes under `key`; nothing when there are none. */
  delete(key: string): Promise<void>;
}
