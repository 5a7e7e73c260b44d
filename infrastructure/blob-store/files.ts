// The embedded blob store: one file per blob under DATA_DIR/blobs. A put writes a temporary
// file beside the target, flushes it to disk and renames it over the target, so a reader (or a
// crash) sees the old bytes or the new ones, never half of them.
//
// Each file holds one header line (JSON: the content type) and then the bytes, so a blob and
// its content type change together in that one rename. A key's segments are percent-encoded
// into file names (everything but letters, digits, `_` and `-`, the dot included), so no key
// can name a path outside the folder (`..`) and two different keys never share a file.

import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore, StoredBlob } from '../../application/ports/blob-store';

const FORMAT = 'svc-blob-1';
/** A header longer than this is not one of ours. */
const MAX_HEADER_BYTES = 4096;
const TEMPORARY_SUFFIX = '.tmp';

/** The path segments of a key's file, each safe as a file name. */
export function blobFileSegments(key: string): string[] {
  const segments = key.split('/');
  if (key.length === 0 || segments.some((segment) => segment.length === 0)) throw new Error(`blob key "${key}" has an empty segment`);
  return segments.map((segment) => segment.replace(/[^A-Za-z0-9_-]/gu, (character) => [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('')));
}

export class FileBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  /** The folder blobs are kept in (DATA_DIR/blobs). */
  get directory(): string {
    return this.root;
  }

  private fileOf(key: string): string {
    return path.join(this.root, ...blobFileSegments(key));
  }

  async put(key: string, bytes: Buffer, contentType: string): Promise<void> {
    const file = this.fileOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}${TEMPORARY_SUFFIX}`;
    const header = Buffer.from(`${JSON.stringify({ format: FORMAT, content_type: contentType })}\n`, 'utf8');
    const handle = await open(temporary, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
    try {
      await handle.writeFile(Buffer.concat([header, bytes]));
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temporary, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    await syncDirectory(path.dirname(file));
  }

  async get(key: string): Promise<StoredBlob | null> {
    let content: Buffer;
    try {
      content = await readFile(this.fileOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const end = content.indexOf(0x0a);
    if (end < 0 || end > MAX_HEADER_BYTES) throw new Error(`the blob file of "${key}" has no header`);
    const header = JSON.parse(content.subarray(0, end).toString('utf8')) as { format?: unknown; content_type?: unknown };
    if (header.format !== FORMAT || typeof header.content_type !== 'string') throw new Error(`the blob file of "${key}" is not in the ${FORMAT} format`);
    return { bytes: content.subarray(end + 1), content_type: header.content_type };
  }

  async delete(key: string): Promise<void> {
    const file = this.fileOf(key);
    await rm(file, { force: true });
    await syncDirectory(path.dirname(file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}

/** Makes a rename or removal in `directory` durable (a no-op where directories cannot be opened). */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR' || (error as NodeJS.ErrnoException).code === 'EPERM') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    // Some file systems refuse fsync on a directory; the rename stands either way.
    if (!['EINVAL', 'EPERM', 'EBADF'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
  } finally {
    await handle.close();
  }
}
