// The blob store on an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, ...) through the
// official client, used when S3_BUCKET is set. Keys are the platform's own (`<tenant>/<document>`).
//
// Checksums are computed and validated only where S3 requires them: the newer default
// (a CRC32 on every request and response) is not understood by every S3-compatible server,
// and the platform keeps each document's SHA-256 in its DocumentAdded event anyway.

import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { BlobStore, StoredBlob } from '../../application/ports/blob-store';

export interface S3BlobStoreOptions {
  bucket: string;
  /** The server's base URL (MinIO, Ceph, R2 ...); null: AWS S3 for the region. */
  endpoint: string | null;
  region: string;
  /** Null: the client's default credential chain (environment, shared files, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  /** `bucket` in the path rather than the host name (what most self-hosted servers need). */
  forcePathStyle: boolean;
}

const isMissing = (error: unknown): boolean =>
  error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404);

export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      forcePathStyle: options.forcePathStyle,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: bytes, ContentType: contentType, ContentLength: bytes.length }));
  }

  async get(key: string): Promise<StoredBlob | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      if (!object.Body) return { bytes: Buffer.alloc(0), content_type: object.ContentType ?? 'application/octet-stream' };
      const bytes = Buffer.from(await object.Body.transformToByteArray());
      return { bytes, content_type: object.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
    } catch (error) {
      // S3 answers 204 for a missing key; some compatible servers answer 404.
      if (!isMissing(error)) throw error;
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.destroy();
  }
}
