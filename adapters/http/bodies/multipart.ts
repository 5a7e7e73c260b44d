// The multipart body kind: a `multipart/form-data` upload streamed to temporary files under
// limits (bytes per file, bytes of all files, number of files, number and bytes of fields,
// bytes of the whole request). Each request writes into its own new folder, removed when
// the route's middleware ends, whether it answered, threw or the upload broke off; a route
// that keeps a file moves or copies it before it returns.
//
//   router.post('/documents', ...user, multipartBody({ maxFileBytes: 20 * 1024 * 1024 }), async (ctx) => {
//     const { fields, files } = uploadOf(ctx);
//   });

import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Transform, type TransformCallback, Writable } from 'node:stream';
import { errors, formidable, multipart } from 'formidable';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../../../application/ports/logger';
import { HttpError } from '../errors';
import { assertStreamUnread, declaringBodyKind } from './kinds';

export interface MultipartLimits {
  /** Largest single file, in bytes. */
  maxFileBytes: number;
  /** Most files in one request (default 1). */
  maxFiles?: number;
  /** Largest sum of the files' sizes (default maxFileBytes × maxFiles). */
  maxTotalFileBytes?: number;
  /** Most non-file fields (default 20). */
  maxFields?: number;
  /** Largest sum of the non-file fields' sizes (default 64 KiB). */
  maxFieldsBytes?: number;
  /** Parent of the per-request folders (default the OS temp folder). */
  directory?: string;
}

export interface UploadedFile {
  /** The form field the file came in. */
  field: string;
  /** The name the client gave the file, if any: never used as a path. */
  filename: string | null;
  /** The media type the client declared for the file, if any. */
  media_type: string | null;
  size: number;
  /** The temporary file, removed when the request's middleware ends. */
  path: string;
}

export interface Upload {
  /** Non-file fields: a string, or the strings of a repeated field in order. */
  fields: Record<string, string | string[]>;
  /** In the order they were sent. */
  files: UploadedFile[];
}

/** Room for one part's boundary and headers (name, filename, content type). */
const FRAMING_BYTES_PER_PART = 1024;

const uploads = new WeakMap<object, Upload>();

/** The request's fields and files. */
export function uploadOf(ctx: Context): Upload {
  const upload = uploads.get(ctx.request);
  if (!upload) throw new Error('uploadOf: the route does not declare multipartBody(...) before its handler');
  return upload;
}

interface Limits {
  maxFileBytes: number;
  maxFiles: number;
  maxTotalFileBytes: number;
  maxFields: number;
  maxFieldsBytes: number;
  maxRequestBytes: number;
}

function limitsOf(declared: MultipartLimits): Limits {
  const maxFiles = declared.maxFiles ?? 1;
  const maxFields = declared.maxFields ?? 20;
  const maxTotalFileBytes = declared.maxTotalFileBytes ?? declared.maxFileBytes * maxFiles;
  const maxFieldsBytes = declared.maxFieldsBytes ?? 64 * 1024;
  const maxRequestBytes = maxTotalFileBytes + maxFieldsBytes + (maxFiles + maxFields + 1) * FRAMING_BYTES_PER_PART;
  return { maxFileBytes: declared.maxFileBytes, maxFiles, maxTotalFileBytes, maxFields, maxFieldsBytes, maxRequestBytes };
}

const tooLarge = (code: string, message: string): HttpError => new HttpError(413, code, message);

/** Fails once more than `limit` bytes pass: the whole request is bounded, framing included. */
class ByteLimit extends Transform {
  private received = 0;

  constructor(
    private readonly limit: number,
    private readonly exceeded: () => Error,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length;
    if (this.received > this.limit) callback(this.exceeded());
    else callback(null, chunk);
  }
}

/** Formidable's errors as `{code, message}` answers; anything else (a full disk) stays a 500. */
function answerFor(error: unknown, limits: Limits): unknown {
  if (error instanceof HttpError) return error;
  const code = (error as { code?: unknown; httpCode?: unknown }).code;
  if (typeof code !== 'number' || typeof (error as { httpCode?: unknown }).httpCode !== 'number') return error;
  switch (code) {
    case errors.biggerThanMaxFileSize:
      return tooLarge('file_too_large', `a file is larger than ${limits.maxFileBytes} bytes`);
    case errors.biggerThanTotalMaxFileSize:
      return tooLarge('payload_too_large', `the files are larger than ${limits.maxTotalFileBytes} bytes together`);
    case errors.maxFilesExceeded:
      return tooLarge('too_many_files', `send at most ${limits.maxFiles} file${limits.maxFiles === 1 ? '' : 's'}`);
    case errors.maxFieldsExceeded:
      return tooLarge('too_many_fields', `send at most ${limits.maxFields} fields`);
    case errors.maxFieldsSizeExceeded:
      return tooLarge('payload_too_large', `the fields are larger than ${limits.maxFieldsBytes} bytes together`);
    case errors.noEmptyFiles:
    case errors.smallerThanMinFileSize:
      return new HttpError(400, 'empty_file', 'a file is empty');
    case errors.aborted:
      return new HttpError(400, 'request_aborted', 'the request body was not received completely');
    default:
      return new HttpError(400, 'malformed_multipart', 'the body is not well-formed multipart/form-data');
  }
}

/** Streams the request into `folder`; every file stream opened is pushed onto `writers`. */
async function parseInto(request: IncomingMessage, folder: string, limits: Limits, writers: fs.WriteStream[], finished: () => boolean): Promise<Upload> {
  const form = formidable({
    uploadDir: folder,
    enabledPlugins: [multipart],
    maxFiles: limits.maxFiles,
    maxFileSize: limits.maxFileBytes,
    maxTotalFileSize: limits.maxTotalFileBytes,
    maxFields: limits.maxFields,
    maxFieldsSize: limits.maxFieldsBytes,
    allowEmptyFiles: false,
    // Our own file streams, so that every one is closed before the folder is removed.
    fileWriteStreamHandler: (file) => {
      // A part formidable was still starting when the request failed: write nothing.
      if (finished() || !file) return new Writable({ write: (_chunk, _encoding, callback) => callback() });
      // formidable names the file (a random id inside `folder`); its types omit the field.
      const writer = fs.createWriteStream((file as unknown as { filepath: string }).filepath, { flags: 'wx', mode: 0o600 });
      writers.push(writer);
      return writer;
    },
  });
  const gate = new ByteLimit(limits.maxRequestBytes, () => tooLarge('payload_too_large', `the request body is larger than ${limits.maxRequestBytes} bytes`));
  const broken = (): void => {
    if (!request.complete) gate.destroy(new HttpError(400, 'request_aborted', 'the request body was not received completely'));
  };
  request.once('close', broken);
  request.pipe(gate);
  try {
    // formidable reads the headers and listens to the stream it is given.
    const source = Object.assign(gate, { headers: request.headers }) as unknown as IncomingMessage;
    const [fields, files] = await form.parse(source);
    const upload: Upload = { fields: {}, files: [] };
    for (const [name, values] of Object.entries(fields)) if (values) upload.fields[name] = values.length === 1 ? values[0] : values;
    for (const [field, list] of Object.entries(files)) {
      for (const file of list ?? []) upload.files.push({ field, filename: file.originalFilename, media_type: file.mimetype, size: file.size, path: file.filepath });
    }
    // formidable lists files as their writes finish; the route gets them in the order sent,
    // which is the order their streams were opened.
    const sent = new Map(writers.map((writer, index) => [String(writer.path), index]));
    upload.files.sort((a, b) => (sent.get(a.path) ?? 0) - (sent.get(b.path) ?? 0));
    return upload;
  } catch (error) {
    // The rest is read and dropped (what node:http does with an unread body), so the client
    // finishes sending and reads the answer on a connection that stays usable.
    request.unpipe(gate);
    request.resume();
    throw answerFor(error, limits);
  } finally {
    request.off('close', broken);
  }
}

const closed = (stream: fs.WriteStream): Promise<void> =>
  stream.closed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve()));

/** Declares the multipart body kind for a route: its handler reads `uploadOf(ctx)`. */
export function multipartBody(declared: MultipartLimits): Middleware {
  const limits = limitsOf(declared);
  const parent = declared.directory ?? os.tmpdir();
  return declaringBodyKind({ kind: 'multipart' }, async (ctx, next) => {
    assertStreamUnread(ctx.req, 'multipart');
    const length = ctx.get('content-length');
    const hasBody = (length !== '' && Number(length) > 0) || ctx.get('transfer-encoding') !== '';
    if (!hasBody) {
      uploads.set(ctx.request, { fields: {}, files: [] });
      return next();
    }
    if (!ctx.is('multipart/form-data')) throw new HttpError(415, 'unsupported_media_type', 'send the body as multipart/form-data');
    if (Number(length) > limits.maxRequestBytes) throw tooLarge('payload_too_large', `the request body is larger than ${limits.maxRequestBytes} bytes`);
    const folder = await mkdtemp(path.join(parent, 'svc-upload-'));
    const writers: fs.WriteStream[] = [];
    let finished = false;
    try {
      uploads.set(ctx.request, await parseInto(ctx.req, folder, limits, writers, () => finished));
      await next();
    } finally {
      finished = true;
      for (const writer of writers) writer.destroy();
      await Promise.all(writers.map(closed));
      await rm(folder, { recursive: true, force: true, maxRetries: 3 }).catch((error: unknown) =>
        (ctx.state as { logger?: Logger }).logger?.error({ err: error, folder }, 'could not remove an upload folder'),
      );
    }
  });
}
