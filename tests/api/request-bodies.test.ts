// The body kind is a property of the route (adapters/http/bodies/): JSON by default, a
// multipart upload streamed to temporary files under limits, an HTML form, or the raw bytes
// for a provider signature. A test-only router declares each and is mounted beside the
// platform's own routers on the real app and server.

import fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { expect } from 'chai';
import type { Middleware } from 'koa';
import { silentLogger } from '../../application/ports/logger';
import { formBody, formField, formOf } from '../../adapters/http/bodies/form';
import { multipartBody, uploadOf } from '../../adapters/http/bodies/multipart';
import { rawBody, rawBodyOf } from '../../adapters/http/bodies/raw';
import { createHttpServer } from '../../adapters/http/http-server';
import { createHttpApp } from '../../adapters/http/server';
import { conflict } from '../../domain/shared/errors';
import { temporaryDirectory } from '../support/files';
import { type Account, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const noMetrics = { observeRequest: () => undefined, render: async () => ({ contentType: 'text/plain', body: '' }) };

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

type Part = { name: string; value: string } | { name: string; filename: string; type: string; data: Buffer };

/** A multipart/form-data body written by hand, so the bytes on the wire are known. */
function multipart(parts: Part[], boundary = 'test-boundary-7MA4YWxkTrZu0gW'): { type: string; body: Buffer } {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = 'filename' in part ? `form-data; name="${part.name}"; filename="${part.filename}"\r\ncontent-type: ${part.type}` : `form-data; name="${part.name}"`;
    chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: ${disposition}\r\n\r\n`), 'filename' in part ? part.data : Buffer.from(part.value), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

/** Polls for a condition the server brings about (no fixed sleep); fails after 5 s. */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (const started = Date.now(); !condition(); ) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Bytes that are not UTF-8 (a lone 0xff, an unfinished sequence, a NUL). */
const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x0a, 0x0d, 0xe2, 0x82]);

describe('request bodies by route kind (JSON, multipart, form, raw)', () => {
  let platform: TestServer;
  let server: http.Server;
  let port: number;
  let owner: Account;
  const uploads = temporaryDirectory('svc-uploads-');
  /** The temporary paths the upload handlers saw, to check they are gone afterwards. */
  let seenPaths: string[] = [];

  const leftInUploads = (): string[] => fs.readdirSync(uploads.path);

  function send(method: string, path: string, options: { headers?: Record<string, string>; body?: Buffer | string; chunked?: boolean } = {}): Promise<Answer> {
    const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
    const headers: Record<string, string | number> = { ...options.headers };
    if (body && !options.chunked) headers['content-length'] = body.length;
    return new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
        });
      });
      request.on('error', reject);
      if (body && options.chunked) {
        // Two writes without a Content-Length: node sends Transfer-Encoding: chunked.
        request.write(body.subarray(0, Math.floor(body.length / 2)));
        request.end(body.subarray(Math.floor(body.length / 2)));
      } else request.end(body);
    });
  }

  const upload = (path: string, parts: Part[], chunked = false) => {
    const { type, body } = multipart(parts);
    return send('POST', path, { headers: { 'content-type': type }, body, chunked });
  };
  const file = (name: string, data: Buffer, filename = `${name}.bin`): Part => ({ name, filename, type: 'application/octet-stream', data });

  before(async () => {
    platform = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(platform, 'bodies-org');
    const router = new Router({ prefix: '/test/bodies' });
    router.post('/raw', rawBody({ types: ['application/json', 'application/octet-stream'], limitBytes: 64 }), (ctx) => {
      const bytes = rawBodyOf(ctx);
      ctx.body = { hex: bytes.toString('hex'), length: bytes.length, parsed: ctx.request.body ?? null };
    });
    router.post('/upload', multipartBody({ maxFileBytes: 100, maxFiles: 2, maxTotalFileBytes: 150, maxFields: 2, directory: uploads.path }), async (ctx) => {
      const { fields, files } = uploadOf(ctx);
      seenPaths = files.map((entry) => entry.path);
      const contents = await Promise.all(files.map(async (entry) => (await readFile(entry.path)).toString('hex')));
      ctx.body = { fields, files: files.map(({ path: _path, ...entry }, index) => ({ ...entry, hex: contents[index] })), in_folder: leftInUploads().length };
    });
    router.post('/upload-then-refuse', multipartBody({ maxFileBytes: 100, directory: uploads.path }), (ctx) => {
      seenPaths = uploadOf(ctx).files.map((entry) => entry.path);
      if (!seenPaths.every((path) => fs.existsSync(path))) throw new Error('the upload should be on disk while the handler runs');
      throw conflict('upload_refused', 'refused after reading the upload');
    });
    router.post('/form', formBody({ limitBytes: 64, maxFields: 3 }), (ctx) => {
      const form = formOf(ctx);
      ctx.body = { fields: { ...form }, first_name: formField(form, 'name'), missing: formField(form, 'missing'), parsed: ctx.request.body ?? null };
    });
    router.post('/json', (ctx) => {
      ctx.body = { received: ctx.request.body ?? null };
    });
    // A wiring mistake: the declaration hidden inside another middleware is not on the route's layer.
    const declared = rawBody({ types: ['application/json'], limitBytes: 64 });
    const hidden: Middleware = (ctx, next) => declared(ctx, next);
    router.post('/hidden-raw', hidden, (ctx) => {
      ctx.body = { length: rawBodyOf(ctx).length };
    });
    const app = createHttpApp({ logger: silentLogger, metrics: noMetrics, bodyLimitBytes: platform.platform.config.bodyLimitBytes, routers: [...(await platform.platform.httpRouters()), router] });
    server = createHttpServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await platform.close();
    uploads.remove();
  });
  afterEach(() => expect(leftInUploads(), 'temporary upload files left behind').to.deep.equal([]));

  describe('raw: the exact bytes for a signature check', () => {
    it('keeps bytes that are not UTF-8 exactly as sent', async () => {
      const answer = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/octet-stream' }, body: BINARY });
      expect(answer.status).to.equal(200);
      expect(answer.json).to.deep.equal({ hex: BINARY.toString('hex'), length: BINARY.length, parsed: null });
    });

    it('keeps a JSON body unparsed, byte for byte, chunked or not', async () => {
      const sent = Buffer.from('{ "b":1,\n  "a" : "\\u00e9\u00e9" }', 'utf8');
      for (const chunked of [false, true]) {
        const answer = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/json; charset=utf-8' }, body: sent, chunked });
        expect(answer.json).to.deep.equal({ hex: sent.toString('hex'), length: sent.length, parsed: null });
      }
    });

    it('gives an empty buffer when there is no body', async () => {
      expect((await send('POST', '/test/bodies/raw')).json).to.deep.include({ hex: '', length: 0 });
    });

    it('answers 415 for a content type the route does not declare, or a Content-Encoding', async () => {
      const text = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'text/plain' }, body: 'hello' });
      expect(text.status).to.equal(415);
      expect(text.json).to.deep.equal({ code: 'unsupported_media_type', message: 'send the body as application/json or application/octet-stream' });
      const form = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
      expect(form.status).to.equal(415);
      const gzipped = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: BINARY });
      expect(gzipped.status).to.equal(415);
      expect(gzipped.json.code).to.equal('unsupported_media_type');
    });

    it('answers 413 over the route limit, from Content-Length or while reading, and keeps serving', async () => {
      const big = Buffer.alloc(65, 0x61);
      for (const chunked of [false, true]) {
        const answer = await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/octet-stream' }, body: big, chunked });
        expect(answer.status).to.equal(413);
        expect(answer.json).to.deep.equal({ code: 'payload_too_large', message: 'the request body is larger than 64 bytes' });
      }
      expect((await send('POST', '/test/bodies/raw', { headers: { 'content-type': 'application/octet-stream' }, body: big.subarray(0, 64) })).status).to.equal(200);
    });

    it('fails loudly (500, nothing parsed) when the declaration is hidden from the route', async () => {
      const answer = await send('POST', '/test/bodies/hidden-raw', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(answer.status).to.equal(500);
      expect(answer.json.code).to.equal('internal_error');
    });
  });

  describe('form: what an HTML form posts', () => {
    const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

    it('decodes fields as UTF-8, keeps a repeated field in order, and reads chunked bodies the same way', async () => {
      for (const chunked of [false, true]) {
        const answer = await send('POST', '/test/bodies/form', { headers: FORM, body: 'name=Zo%C3%AB+A&name=b&__proto__=x', chunked });
        expect(answer.status).to.equal(200);
        expect(answer.json).to.deep.equal({ fields: { name: ['Zoë A', 'b'], ['__proto__']: 'x' }, first_name: 'Zoë A', missing: '', parsed: null });
      }
    });

    it('gives no fields when there is no body', async () => {
      expect((await send('POST', '/test/bodies/form')).json).to.deep.include({ fields: {}, first_name: '' });
    });

    it('answers 415 for another content type or a Content-Encoding, 413 over the limit or the field count', async () => {
      const json = await send('POST', '/test/bodies/form', { headers: { 'content-type': 'application/json' }, body: '{"name":"x"}' });
      expect(json).to.deep.equal({ status: 415, json: { code: 'unsupported_media_type', message: 'send the body as application/x-www-form-urlencoded' } });
      const gzipped = await send('POST', '/test/bodies/form', { headers: { ...FORM, 'content-encoding': 'gzip' }, body: BINARY });
      expect(gzipped.status).to.equal(415);
      for (const chunked of [false, true]) {
        const big = await send('POST', '/test/bodies/form', { headers: FORM, body: `name=${'x'.repeat(70)}`, chunked });
        expect(big).to.deep.equal({ status: 413, json: { code: 'payload_too_large', message: 'the request body is larger than 64 bytes' } });
      }
      const many = await send('POST', '/test/bodies/form', { headers: FORM, body: 'a=1&b=2&c=3&d=4' });
      expect(many).to.deep.equal({ status: 413, json: { code: 'too_many_fields', message: 'send at most 3 fields' } });
    });
  });

  describe('multipart: uploads streamed to temporary files', () => {
    it('hands the route its fields and files, byte for byte, then removes the files', async () => {
      const answer = await upload('/test/bodies/upload', [{ name: 'workspace_id', value: 'ws-1' }, file('file', BINARY, 'notes.bin'), file('extra', Buffer.from('second'), 'b.txt')]);
      expect(answer.status).to.equal(200);
      expect(answer.json.fields).to.deep.equal({ workspace_id: 'ws-1' });
      expect(answer.json.files).to.deep.equal([
        { field: 'file', filename: 'notes.bin', media_type: 'application/octet-stream', size: BINARY.length, hex: BINARY.toString('hex') },
        { field: 'extra', filename: 'b.txt', media_type: 'application/octet-stream', size: 6, hex: Buffer.from('second').toString('hex') },
      ]);
      expect(answer.json.in_folder).to.equal(1);
      expect(seenPaths.some((path) => fs.existsSync(path))).to.equal(false);
    });

    it('reads a chunked upload the same way', async () => {
      const answer = await upload('/test/bodies/upload', [file('file', BINARY)], true);
      expect(answer.status).to.equal(200);
      expect(answer.json.files[0].hex).to.equal(BINARY.toString('hex'));
    });

    it('answers 413 file_too_large for a file over the per-file limit, and leaves no file', async () => {
      const answer = await upload('/test/bodies/upload', [file('file', Buffer.alloc(101, 1))]);
      expect(answer.status).to.equal(413);
      expect(answer.json).to.deep.equal({ code: 'file_too_large', message: 'a file is larger than 100 bytes' });
    });

    it('answers 413 for files over the total, too many files or too many fields', async () => {
      const total = await upload('/test/bodies/upload', [file('a', Buffer.alloc(80, 1)), file('b', Buffer.alloc(80, 2))]);
      expect(total.status).to.equal(413);
      expect(total.json).to.deep.equal({ code: 'payload_too_large', message: 'the files are larger than 150 bytes together' });
      const files = await upload('/test/bodies/upload', [file('a', Buffer.from('1')), file('b', Buffer.from('2')), file('c', Buffer.from('3'))]);
      expect(files.status).to.equal(413);
      expect(files.json).to.deep.equal({ code: 'too_many_files', message: 'send at most 2 files' });
      const fields = await upload('/test/bodies/upload', [1, 2, 3].map((n) => ({ name: `f${n}`, value: 'x' })));
      expect(fields.status).to.equal(413);
      expect(fields.json.code).to.equal('too_many_fields');
    });

    it('answers 413 for a request over the whole limit (framing included): from Content-Length, and while reading', async () => {
      // 150 bytes of files, 64 KiB of fields and 1 KiB of framing for each of 5 parts.
      const whole = 150 + 64 * 1024 + 5 * 1024;
      const { type, body } = multipart([file('file', BINARY)]);
      // Bytes before the first boundary are no file and no field: only the whole limit bounds them.
      const padded = Buffer.concat([Buffer.alloc(whole, 0x2d), Buffer.from('\r\n'), body]);
      for (const chunked of [false, true]) {
        const answer = await send('POST', '/test/bodies/upload', { headers: { 'content-type': type }, body: padded, chunked });
        expect(answer, `chunked: ${chunked}`).to.deep.equal({ status: 413, json: { code: 'payload_too_large', message: `the request body is larger than ${whole} bytes` } });
      }
    });

    it('removes the files when the route fails after reading them', async () => {
      const answer = await upload('/test/bodies/upload-then-refuse', [file('file', BINARY)]);
      expect(answer.status).to.equal(409);
      expect(answer.json.code).to.equal('upload_refused');
      expect(seenPaths).to.have.length(1);
      expect(fs.existsSync(seenPaths[0])).to.equal(false);
    });

    it('removes the files of an upload the client abandons halfway', async () => {
      const { type, body } = multipart([file('file', Buffer.alloc(90, 7))]);
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/test/bodies/upload', headers: { 'content-type': type } });
      request.on('error', () => undefined);
      // Up to the middle of the file: the server has opened its temporary file.
      request.write(body.subarray(0, body.length - 60));
      await waitFor(() => fs.readdirSync(uploads.path).some((folder) => fs.readdirSync(`${uploads.path}/${folder}`).length > 0), 'the upload to start');
      request.destroy();
      await waitFor(() => leftInUploads().length === 0, 'the abandoned upload to be removed');
    });

    it('answers 415 for another content type, 400 for a broken or empty upload', async () => {
      const json = await send('POST', '/test/bodies/upload', { headers: { 'content-type': 'application/json' }, body: '{"file":"x"}' });
      expect(json.status).to.equal(415);
      expect(json.json).to.deep.equal({ code: 'unsupported_media_type', message: 'send the body as multipart/form-data' });
      const noBoundary = await send('POST', '/test/bodies/upload', { headers: { 'content-type': 'multipart/form-data' }, body: 'whatever' });
      expect(noBoundary.status).to.equal(400);
      expect(noBoundary.json.code).to.equal('malformed_multipart');
      const truncated = multipart([file('file', BINARY)]);
      const cut = await send('POST', '/test/bodies/upload', { headers: { 'content-type': truncated.type }, body: truncated.body.subarray(0, truncated.body.length - 20) });
      expect(cut.status).to.equal(400);
      expect(cut.json.code).to.equal('malformed_multipart');
      const empty = await upload('/test/bodies/upload', [file('file', Buffer.alloc(0))]);
      expect(empty.status).to.equal(400);
      expect(empty.json).to.deep.equal({ code: 'empty_file', message: 'a file is empty' });
    });
  });

  describe('JSON: the default, unchanged', () => {
    it('parses JSON, and any application/*+json as JSON', async () => {
      for (const type of ['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json', 'application/vnd.api+json']) {
        const answer = await send('POST', '/test/bodies/json', { headers: { 'content-type': type }, body: '{"name":"x"}' });
        expect(answer, type).to.deep.equal({ status: 200, json: { received: { name: 'x' } } });
      }
    });

    it('answers 415 for multipart, form and text bodies; 400 for broken JSON; 413 over BODY_LIMIT_BYTES', async () => {
      const { type, body } = multipart([file('file', BINARY)]);
      for (const [contentType, sent] of [[type, body], ['application/x-www-form-urlencoded', 'a=1'], ['text/plain', 'hello']] as const) {
        const answer = await send('POST', '/test/bodies/json', { headers: { 'content-type': contentType }, body: sent });
        expect(answer, contentType).to.deep.equal({ status: 415, json: { code: 'unsupported_media_type', message: 'send the body as application/json' } });
      }
      const broken = await send('POST', '/test/bodies/json', { headers: { 'content-type': 'application/json' }, body: '{"name": ' });
      expect(broken.status).to.equal(400);
      expect(broken.json.code).to.equal('malformed_json');
      const limit = platform.platform.config.bodyLimitBytes;
      const oversized = await send('POST', '/test/bodies/json', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ blob: 'x'.repeat(limit) }) });
      expect(oversized).to.deep.equal({ status: 413, json: { code: 'payload_too_large', message: `the request body is larger than ${limit} bytes` } });
    });

    it('applies a team update sent as application/merge-patch+json on the real route', async () => {
      const created = await platform.request('POST', '/api/v1/org/teams', { headers: { authorization: `Bearer ${owner.token}` }, body: { name: 'Patched', description: 'before' } });
      expect(created.status).to.equal(201);
      const answer = await send('PATCH', `/api/v1/org/teams/${created.json.id}`, {
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/merge-patch+json' },
        body: '{"name":"Merged","description":null}',
      });
      expect(answer.status).to.equal(200);
      expect(answer.json).to.deep.include({ name: 'Merged', description: null });
      const events = await platform.platform.eventStore.readStream(`team-${created.json.id}`);
      expect(events.map((event) => event.type)).to.deep.equal(['TeamCreated', 'TeamUpdated']);
      expect(events[1].data).to.deep.include({ name: 'Merged', description: null });
    });
  });
});
