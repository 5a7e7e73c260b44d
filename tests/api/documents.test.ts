// The documents routes (spec 4.5) over HTTP: every supported type uploaded (each file made by
// the test), text documents, list, get, view, reindex and delete, with who may do what, the
// limits (413, 415, 429) and what a refused upload leaves behind: nothing. No indexing saga
// runs in this suite (`documentIndexing: false`), so every document stays `queued`;
// tests/api/knowledge-retrieval.test.ts indexes uploads of every type and finds them.

import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { BLOBS_FOLDER } from '../../infrastructure/composition-root';
import { expectEveryEventAudited } from '../support/audit';
import { type FormPart, docxOf, multipartForm, pdfOf, windowsExecutable } from '../support/documents';
import { type Account, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { castWorkspaceRoles } from '../support/workspace-cast';

const ADMIN = { email: 'root@documents.test', password: 'root password 123' };
const MAX_BYTES = 64 * 1024;

const MARKDOWN = '# Returns\n\nItems can be returned within **30 days**.\n\n## Exceptions\n\n- Sale items are final.\n';
const HTML = '<!DOCTYPE html><html><head><title>Shipping</title></head><body><h1>Shipping</h1><p>Free shipping over 50 euros.</p></body></html>';
const CSV = 'product,price,stock\nTea,3.50,12\nCoffee,4.20,0\n';
const TEXT = 'Opening hours: Monday to Friday, nine to five.\nClosed on public holidays.\n';

describe('documents (/api/v1/documents)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let writer: Account;
  let reader: Account;
  let stranger: Account;
  let outsider: Account;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let foreignWorkspaceId: string;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const upload = (account: Account | null, parts: readonly FormPart[], headers: Record<string, string> = {}): Promise<TestResponse> => {
    const form = multipartForm(parts);
    return server.request('POST', '/api/v1/documents', { headers: { ...(account ? as(account) : {}), ...form.headers, ...headers }, rawBody: form.rawBody });
  };
  const file = (filename: string, content: Buffer | string, type?: string): FormPart => ({ name: 'file', filename, content: Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8'), type });
  const field = (name: string, value: string): FormPart => ({ name, value });
  const uploaded = async (account: Account, parts: readonly FormPart[]): Promise<{ id: string; [field: string]: unknown }> => {
    const response = await upload(account, parts);
    if (response.status !== 201) throw new Error(`not uploaded: ${response.status} ${response.text}`);
    return response.json;
  };
  const addText = (account: Account | null, body: unknown, headers: Record<string, string> = {}) =>
    server.request('POST', '/api/v1/documents/text', { headers: { ...(account ? as(account) : {}), ...headers }, body });
  /** Every blob file of a tenant, under DATA_DIR/blobs/<tenant>. */
  const blobsOf = (tenantId: string): string[] => {
    const folder = path.join(server.platform.config.dataDir, BLOBS_FOLDER, tenantId);
    return fs.existsSync(folder) ? fs.readdirSync(folder).sort() : [];
  };
  const defaultWorkspace = async (account: Account): Promise<string> => (await server.request('GET', '/api/v1/org/workspaces', { headers: as(account) })).json.items[0].id;
  const expectRefusedWithoutTrace = async (response: TestResponse, status: number, code: string, tenantId: string, blobsBefore: string[]) => {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code).to.equal(code);
    expect((await response.events()).filter((event) => !event.startsWith('AccessDenied'))).to.deep.equal([]);
    expect(blobsOf(tenantId)).to.deep.equal(blobsBefore);
  };

  before(async () => {
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', DOCUMENT_MAX_BYTES: String(MAX_BYTES), SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password },
      { documentIndexing: false },
    );
    // More members and documents than the free plan allows; the quota has its own tenant below.
    ({ owner, admin, writer, reader, stranger, outsider, workspaceId, otherWorkspaceId, foreignWorkspaceId } = await castWorkspaceRoles(server, 'docs', ['documents']));
  });
  after(() => server.close());

  describe('POST /documents (upload)', () => {
    it('uploads one document of every supported type, made here, each typed from its bytes and queued', async () => {
      const files: Array<[string, Buffer, string, string]> = [
        ['Refund policy.pdf', pdfOf(['Refund policy', 'Items can be returned within 30 days.']), 'application/pdf', 'Refund policy'],
        ['Shipping guide.docx', await docxOf([{ heading: 1, text: 'Shipping' }, 'We ship worldwide.']), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'Shipping guide'],
        ['shipping.html', Buffer.from(HTML), 'text/html', 'shipping'],
        ['returns.md', Buffer.from(MARKDOWN), 'text/markdown', 'returns'],
        ['hours.txt', Buffer.from(TEXT), 'text/plain', 'hours'],
        ['price_list.csv', Buffer.from(CSV), 'text/csv', 'price list'],
      ];
      for (const [filename, bytes, contentType, title] of files) {
        // Browsers declare whatever type the name suggests; it is never what decides.
        const response = await upload(writer, [field('workspace_id', workspaceId), file(filename, bytes, 'application/octet-stream')]);
        expect(response.status, `${filename}: ${response.text}`).to.equal(201);
        expect(response.json).to.deep.include({
          workspace_id: workspaceId,
          title,
          source: 'upload',
          filename,
          content_type: contentType,
          size_bytes: bytes.length,
          status: 'queued',
          failure_reason: null,
          chunks: 0,
          generation: 1,
          added_by: writer.user_id,
          indexed_at: null,
        });
        expect(response.json.sha256).to.match(/^[0-9a-f]{64}$/);
        expect(response.headers.get('location')).to.equal(`/api/v1/documents/${response.json.id}`);
        expect(response.headers.get('etag')).to.equal('"0"');
        expect(await response.events()).to.deep.equal(['DocumentAdded@document']);
        const blob = await server.platform.blobStore.get(`${owner.tenant_id}/${response.json.id}`);
        expect(blob!.bytes.equals(bytes), filename).to.equal(true);
        expect(blob!.content_type).to.equal(contentType);
      }
    });

    it('records who added it: the event carries the member as actor, and the blob key of tenant and document', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('actor.txt', 'who added me')]);
      const [added] = await server.platform.eventStore.readStream(`document-${document.id}`);
      expect(added.metadata.actor).to.deep.equal({ kind: 'user', id: writer.user_id });
      expect(added.metadata.tenant_id).to.equal(owner.tenant_id);
      expect(added.data).to.deep.include({ blob_key: `${owner.tenant_id}/${document.id}`, tenant_id: owner.tenant_id, workspace_id: workspaceId });
    });

    it('takes a title when given, keeps only the last segment of a file name, and lets admins and owners upload to any workspace', async () => {
      const titled = await uploaded(admin, [field('workspace_id', otherWorkspaceId), field('title', '  Staff handbook  '), file('C:\\Users\\ann\\handbook.md', MARKDOWN)]);
      expect(titled).to.deep.include({ title: 'Staff handbook', filename: 'handbook.md', workspace_id: otherWorkspaceId });
      const untitled = await uploaded(owner, [field('workspace_id', workspaceId), field('title', ''), file('__.txt', TEXT)]);
      expect(untitled).to.deep.include({ title: 'Untitled document', filename: '__.txt' });
    });

    it('401 without a token, before reading the upload', async () => {
      const response = await upload(null, [field('workspace_id', workspaceId), file('a.txt', TEXT)]);
      expect(response.status).to.equal(401);
    });

    it('403 workspace_read_only for a member whose team only reads the workspace; 404 for a workspace they are not granted or another tenant’s; nothing is left behind', async () => {
      const before = blobsOf(owner.tenant_id);
      const readOnly = await upload(reader, [field('workspace_id', workspaceId), file('a.txt', TEXT)]);
      await expectRefusedWithoutTrace(readOnly, 403, 'workspace_read_only', owner.tenant_id, before);
      // The denial itself is recorded for the audit log, and only that.
      expect(await readOnly.events()).to.deep.equal(['AccessDenied@accessDenial']);
      for (const [account, workspace] of [[stranger, workspaceId], [writer, otherWorkspaceId], [writer, foreignWorkspaceId], [owner, foreignWorkspaceId], [writer, 'no-such-workspace']] as const) {
        const response = await upload(account, [field('workspace_id', workspace), file('a.txt', TEXT)]);
        await expectRefusedWithoutTrace(response, 404, 'workspace_not_found', owner.tenant_id, before);
      }
    });

    it('400 invalid_request naming each bad field', async () => {
      const cases: Array<[FormPart[], string]> = [
        [[file('a.txt', TEXT)], 'workspace_id'],
        [[field('workspace_id', '  '), file('a.txt', TEXT)], 'workspace_id'],
        [[field('workspace_id', workspaceId), field('workspace_id', workspaceId), file('a.txt', TEXT)], 'workspace_id'],
        [[field('workspace_id', workspaceId)], 'file'],
        [[field('workspace_id', workspaceId), { name: 'attachment', filename: 'a.txt', content: Buffer.from(TEXT) }], 'file'],
        [[field('workspace_id', workspaceId), field('title', 't'.repeat(201)), file('a.txt', TEXT)], 'title'],
        [[field('workspace_id', workspaceId), field('title', 'bad\u202etitle'), file('a.txt', TEXT)], 'title'],
        [[field('workspace_id', workspaceId), field('title', 'one'), field('title', 'two'), file('a.txt', TEXT)], 'title'],
      ];
      const before = blobsOf(owner.tenant_id);
      for (const [parts, name] of cases) {
        const response = await upload(writer, parts);
        expect(response.status, `${name}: ${response.text}`).to.equal(400);
        expect(response.json, JSON.stringify(parts.map((part) => part.name))).to.deep.include({ code: 'invalid_request', field: name });
        expect(await response.events()).to.deep.equal([]);
      }
      expect(blobsOf(owner.tenant_id)).to.deep.equal(before);
      // An empty file is refused by the upload itself.
      expect((await upload(writer, [field('workspace_id', workspaceId), file('empty.txt', '')])).json.code).to.equal('empty_file');
    });

    it('415 unsupported_document_type for a Windows program renamed .pdf, or any file that is no supported document, leaving no event and no blob', async () => {
      const before = blobsOf(owner.tenant_id);
      const exe = await upload(writer, [field('workspace_id', workspaceId), file('invoice.pdf', windowsExecutable(), 'application/pdf')]);
      await expectRefusedWithoutTrace(exe, 415, 'unsupported_document_type', owner.tenant_id, before);
      expect(exe.json.message).to.contain('decided from its content, not its name');
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]);
      await expectRefusedWithoutTrace(await upload(writer, [field('workspace_id', workspaceId), file('notes.md', png)]), 415, 'unsupported_document_type', owner.tenant_id, before);
      // A body that is not multipart at all.
      const json = await server.request('POST', '/api/v1/documents', { headers: as(writer), body: { workspace_id: workspaceId } });
      expect(json.status).to.equal(415);
      expect(json.json.code).to.equal('unsupported_media_type');
    });

    it('413 document_too_large past DOCUMENT_MAX_BYTES, leaving nothing behind; exactly the limit is fine', async () => {
      const before = blobsOf(owner.tenant_id);
      const tooLarge = await upload(writer, [field('workspace_id', workspaceId), file('big.txt', 'x'.repeat(MAX_BYTES + 1))]);
      await expectRefusedWithoutTrace(tooLarge, 413, 'document_too_large', owner.tenant_id, before);
      const twoFiles = await upload(writer, [field('workspace_id', workspaceId), file('a.txt', 'one'), file('b.txt', 'two')]);
      await expectRefusedWithoutTrace(twoFiles, 413, 'too_many_files', owner.tenant_id, before);
      const atLimit = await upload(writer, [field('workspace_id', workspaceId), file('limit.txt', 'y'.repeat(MAX_BYTES))]);
      expect(atLimit.status, atLimit.text).to.equal(201);
      expect(atLimit.json.size_bytes).to.equal(MAX_BYTES);
    });

    it('removes the bytes again when the document cannot be recorded, and records nothing when the bytes cannot be stored', async () => {
      const events = server.platform.eventStore;
      const append = events.appendToStream.bind(events);
      events.appendToStream = async (stream, ...rest) => {
        if (stream.startsWith('document-')) throw new Error('the event store is unreachable');
        return append(stream, ...rest);
      };
      const before = blobsOf(owner.tenant_id);
      try {
        const failed = await upload(writer, [field('workspace_id', workspaceId), file('lost.txt', 'never recorded')]);
        expect(failed.status).to.equal(500);
        expect(await failed.events()).to.deep.equal([]);
        expect(blobsOf(owner.tenant_id)).to.deep.equal(before);
      } finally {
        events.appendToStream = append;
      }
      const blobs = server.platform.blobStore;
      const put = blobs.put.bind(blobs);
      blobs.put = async () => {
        throw new Error('the bucket is unreachable');
      };
      try {
        const failed = await upload(writer, [field('workspace_id', workspaceId), file('unstored.txt', 'never stored')]);
        expect(failed.status).to.equal(500);
        expect(await failed.events()).to.deep.equal([]);
      } finally {
        blobs.put = put;
      }
    });

    it('creates one document for one Idempotency-Key, and refuses the key with another file (422)', async () => {
      const parts = [field('workspace_id', workspaceId), file('once.txt', 'uploaded once')];
      const first = await upload(writer, parts, { 'idempotency-key': 'upload-once' });
      const again = await upload(writer, parts, { 'idempotency-key': 'upload-once' });
      expect(first.status).to.equal(201);
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json.id).to.equal(first.json.id);
      expect(await again.events()).to.deep.equal([]);
      expect(blobsOf(owner.tenant_id).filter((name) => name === first.json.id)).to.have.length(1);
      const other = await upload(writer, [field('workspace_id', workspaceId), file('once.txt', 'another content')], { 'idempotency-key': 'upload-once' });
      expect(other.status).to.equal(422);
      expect(other.json.code).to.equal('idempotency_key_reused');
    });
  });

  describe('POST /documents/text', () => {
    it('adds a text as a document, typed from its content (Markdown here), queued', async () => {
      const response = await addText(writer, { workspace_id: workspaceId, title: 'FAQ', text: MARKDOWN });
      expect(response.status, response.text).to.equal(201);
      expect(response.json).to.deep.include({ title: 'FAQ', source: 'text', filename: null, content_type: 'text/markdown', size_bytes: Buffer.byteLength(MARKDOWN), status: 'queued' });
      expect(response.headers.get('location')).to.equal(`/api/v1/documents/${response.json.id}`);
      expect(await response.events()).to.deep.equal(['DocumentAdded@document']);
      expect((await server.platform.blobStore.get(`${owner.tenant_id}/${response.json.id}`))!.bytes.toString('utf8')).to.equal(MARKDOWN);
      const plain = await addText(owner, { workspace_id: otherWorkspaceId, title: 'Hours', text: TEXT });
      expect(plain.json.content_type).to.equal('text/plain');
    });

    it('401, 403, 404 as for uploads', async () => {
      expect((await addText(null, { workspace_id: workspaceId, title: 'x', text: 'y' })).status).to.equal(401);
      const before = blobsOf(owner.tenant_id);
      await expectRefusedWithoutTrace(await addText(reader, { workspace_id: workspaceId, title: 'x', text: 'y' }), 403, 'workspace_read_only', owner.tenant_id, before);
      await expectRefusedWithoutTrace(await addText(stranger, { workspace_id: workspaceId, title: 'x', text: 'y' }), 404, 'workspace_not_found', owner.tenant_id, before);
      await expectRefusedWithoutTrace(await addText(owner, { workspace_id: foreignWorkspaceId, title: 'x', text: 'y' }), 404, 'workspace_not_found', owner.tenant_id, before);
    });

    it('400 invalid_request naming each bad field', async () => {
      const cases: Array<[unknown, string]> = [
        [{ title: 'x', text: 'y' }, 'workspace_id'],
        [{ workspace_id: 7, title: 'x', text: 'y' }, 'workspace_id'],
        [{ workspace_id: workspaceId, text: 'y' }, 'title'],
        [{ workspace_id: workspaceId, title: '  ', text: 'y' }, 'title'],
        [{ workspace_id: workspaceId, title: 't'.repeat(201), text: 'y' }, 'title'],
        [{ workspace_id: workspaceId, title: 'x' }, 'text'],
        [{ workspace_id: workspaceId, title: 'x', text: '   ' }, 'text'],
        [{ workspace_id: workspaceId, title: 'x', text: 'nul \u0000 inside' }, 'text'],
        [{ workspace_id: workspaceId, title: 'x', text: ['y'] }, 'text'],
      ];
      for (const [body, name] of cases) {
        const response = await addText(writer, body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field: name });
        expect(await response.events()).to.deep.equal([]);
      }
    });

    it('413 document_too_large past DOCUMENT_MAX_BYTES', async () => {
      const before = blobsOf(owner.tenant_id);
      await expectRefusedWithoutTrace(await addText(writer, { workspace_id: workspaceId, title: 'Long', text: 'é'.repeat(MAX_BYTES / 2 + 1) }), 413, 'document_too_large', owner.tenant_id, before);
    });

    it('creates one document for one Idempotency-Key; 422 for the key with another body', async () => {
      const body = { workspace_id: workspaceId, title: 'Once', text: 'only once' };
      const first = await addText(writer, body, { 'idempotency-key': 'text-once' });
      const again = await addText(writer, body, { 'idempotency-key': 'text-once' });
      expect(again.json.id).to.equal(first.json.id);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect((await addText(writer, { ...body, text: 'changed' }, { 'idempotency-key': 'text-once' })).status).to.equal(422);
    });
  });

  describe('GET /documents and /documents/{id}', () => {
    it('lists newest first the documents the caller may read: all for admins, the granted workspaces for members, none for a member without a team', async () => {
      const all = await server.request('GET', '/api/v1/documents?limit=1000', { headers: as(admin) });
      expect(all.status).to.equal(200);
      const items: Array<{ workspace_id: string; added_at: string; status: string }> = all.json.items;
      expect(items.some((item) => item.workspace_id === otherWorkspaceId)).to.equal(true);
      expect(items.map((item) => item.added_at)).to.deep.equal(items.map((item) => item.added_at).sort().reverse());
      // Nothing indexes in this suite: every document waits, queued.
      expect(new Set(items.map((item) => item.status))).to.deep.equal(new Set(['queued']));
      const asReader = await server.request('GET', '/api/v1/documents?limit=1000', { headers: as(reader) });
      expect(asReader.json.items.length).to.be.greaterThan(0);
      expect(asReader.json.items.every((item: { workspace_id: string }) => item.workspace_id === workspaceId)).to.equal(true);
      expect((await server.request('GET', '/api/v1/documents', { headers: as(stranger) })).json).to.deep.equal({ items: [], next_cursor: null });
      expect((await server.request('GET', '/api/v1/documents', { headers: as(outsider) })).json).to.deep.equal({ items: [], next_cursor: null });
    });

    it('filters by workspace and status, and pages with a cursor', async () => {
      const inOther = await server.request('GET', `/api/v1/documents?workspace_id=${otherWorkspaceId}`, { headers: as(owner) });
      expect(inOther.json.items.length).to.be.greaterThan(0);
      expect(inOther.json.items.every((item: { workspace_id: string }) => item.workspace_id === otherWorkspaceId)).to.equal(true);
      expect((await server.request('GET', '/api/v1/documents?status=ready', { headers: as(owner) })).json.items).to.deep.equal([]);
      const full = (await server.request('GET', `/api/v1/documents?workspace_id=${workspaceId}&status=queued&limit=1000`, { headers: as(writer) })).json.items.map((item: { id: string }) => item.id);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: TestResponse = await server.request('GET', `/api/v1/documents?workspace_id=${workspaceId}&status=queued&limit=3${cursor ? `&cursor=${cursor}` : ''}`, { headers: as(writer) });
        expect(page.json.items.length).to.be.at.most(3);
        paged.push(...page.json.items.map((item: { id: string }) => item.id));
        cursor = page.json.next_cursor;
      } while (cursor);
      expect(paged).to.deep.equal(full);
    });

    it('400 for a bad filter, limit or cursor; 404 for a workspace the caller may not read; 401 without a token', async () => {
      for (const [query, name] of [['status=done', 'status'], ['workspace_id=', 'workspace_id'], ['limit=0', 'limit'], ['cursor=', 'cursor']]) {
        const response = await server.request('GET', `/api/v1/documents?${query}`, { headers: as(owner) });
        expect(response.status, query).to.equal(400);
        expect(response.json.field, query).to.equal(name);
      }
      expect((await server.request('GET', '/api/v1/documents?cursor=junk', { headers: as(owner) })).json.code).to.equal('invalid_cursor');
      for (const [account, workspace] of [[reader, otherWorkspaceId], [owner, foreignWorkspaceId]] as const) {
        const response = await server.request('GET', `/api/v1/documents?workspace_id=${workspace}`, { headers: as(account) });
        expect(response.status).to.equal(404);
        expect(response.json.code).to.equal('workspace_not_found');
      }
      expect((await server.request('GET', '/api/v1/documents')).status).to.equal(401);
    });

    it('gets one document with its ETag; 404 for an unknown one, another tenant’s, or one of a workspace the member is not granted', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('one.txt', 'one document')]);
      const internal = await uploaded(owner, [field('workspace_id', otherWorkspaceId), file('internal.txt', 'internal only')]);
      const response = await server.request('GET', `/api/v1/documents/${document.id}`, { headers: as(reader) });
      expect(response.status).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"0"');
      expect(response.json).to.deep.include({ id: document.id, title: 'one', status: 'queued' });
      expect(response.json).to.not.have.any.keys('blob_key', 'tenant_id');
      for (const [account, id] of [[owner, 'no-such-document'], [outsider, document.id], [reader, internal.id], [stranger, document.id]] as const) {
        const missing = await server.request('GET', `/api/v1/documents/${id}`, { headers: as(account) });
        expect(missing.status, `${account.email} ${id}`).to.equal(404);
        expect(missing.json.code).to.equal('document_not_found');
      }
      expect((await server.request('GET', `/api/v1/documents/${document.id}`)).status).to.equal(401);
    });
  });

  describe('GET /documents/{id}/view', () => {
    it('answers the original bytes with their sniffed type, inline with a safe file name, never sniffed or run by the browser', async () => {
      const pdf = pdfOf(['Viewable']);
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('Résumé "final".pdf', pdf, 'text/html')]);
      for (const account of [reader, writer, admin, owner]) {
        const response = await fetch(`${server.url}/api/v1/documents/${document.id}/view`, { headers: as(account) });
        expect(response.status).to.equal(200);
        expect(Buffer.from(await response.arrayBuffer()).equals(pdf)).to.equal(true);
        expect(response.headers.get('content-type')).to.equal('application/pdf');
        expect(response.headers.get('content-disposition')).to.equal(`inline; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`);
        expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
        expect(response.headers.get('content-security-policy')).to.contain('sandbox');
        expect(response.headers.get('cache-control')).to.equal('private, no-store');
      }
    });

    it('answers a text document as UTF-8, named after its title; HTML is sandboxed', async () => {
      const text = await addText(writer, { workspace_id: workspaceId, title: 'Grüße', text: 'Grüße aus Köln' });
      const response = await server.request('GET', `/api/v1/documents/${text.json.id}/view`, { headers: as(reader) });
      expect(response.status).to.equal(200);
      expect(response.text).to.equal('Grüße aus Köln');
      expect(response.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
      expect(response.headers.get('content-disposition')).to.equal(`inline; filename="Gr__e.txt"; filename*=UTF-8''Gr%C3%BC%C3%9Fe.txt`);
      const html = await uploaded(writer, [field('workspace_id', workspaceId), file('page.html', '<p>hi</p><script>alert(1)</script>')]);
      const page = await server.request('GET', `/api/v1/documents/${html.id}/view`, { headers: as(reader) });
      expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).to.equal("default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox");
    });

    it('404 to a member whose teams do not grant the workspace, to another tenant and for an unknown id; 401 without a token', async () => {
      const internal = await uploaded(owner, [field('workspace_id', otherWorkspaceId), file('secret.txt', 'internal only')]);
      for (const [account, id] of [[reader, internal.id], [writer, internal.id], [stranger, internal.id], [outsider, internal.id], [owner, 'no-such-document']] as const) {
        const response = await server.request('GET', `/api/v1/documents/${id}/view`, { headers: as(account) });
        expect(response.status).to.equal(404);
        expect(response.json.code).to.equal('document_not_found');
        expect(response.text).to.not.contain('internal only');
      }
      expect((await server.request('GET', `/api/v1/documents/${internal.id}/view`)).status).to.equal(401);
    });
  });

  describe('POST /documents/{id}/reindex', () => {
    it('queues the next generation (202) with DocumentReindexRequested, honouring If-Match', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('again.md', MARKDOWN)]);
      const stale = await server.request('POST', `/api/v1/documents/${document.id}/reindex`, { headers: { ...as(writer), 'if-match': '"7"' } });
      expect(stale.status).to.equal(412);
      const response = await server.request('POST', `/api/v1/documents/${document.id}/reindex`, { headers: { ...as(writer), 'if-match': '"0"' } });
      expect(response.status, response.text).to.equal(202);
      expect(response.json).to.deep.include({ id: document.id, status: 'queued', generation: 2 });
      expect(response.headers.get('etag')).to.equal('"1"');
      expect(await response.events()).to.deep.equal(['DocumentReindexRequested@document']);
      const again = await server.request('POST', `/api/v1/documents/${document.id}/reindex`, { headers: as(admin) });
      expect(again.json.generation).to.equal(3);
    });

    it('403 workspace_read_only for a reader; 404 for one who may not read it, another tenant and an unknown id; 401 without a token', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('guarded.txt', 'guarded')]);
      const refused = await server.request('POST', `/api/v1/documents/${document.id}/reindex`, { headers: as(reader) });
      expect(refused.status).to.equal(403);
      expect(refused.json.code).to.equal('workspace_read_only');
      for (const [account, id] of [[stranger, document.id], [outsider, document.id], [owner, 'no-such-document']] as const) {
        const response = await server.request('POST', `/api/v1/documents/${id}/reindex`, { headers: as(account) });
        expect(response.status).to.equal(404);
        expect(response.json.code).to.equal('document_not_found');
      }
      expect((await server.request('POST', `/api/v1/documents/${document.id}/reindex`)).status).to.equal(401);
    });
  });

  describe('DELETE /documents/{id}', () => {
    it('deletes with DocumentDeleted only (its bytes and chunks are the indexing saga’s to remove), honouring If-Match', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('gone.txt', 'soon gone')]);
      const stale = await server.request('DELETE', `/api/v1/documents/${document.id}`, { headers: { ...as(writer), 'if-match': '"3"' } });
      expect(stale.status).to.equal(412);
      const response = await server.request('DELETE', `/api/v1/documents/${document.id}`, { headers: { ...as(writer), 'if-match': '"0"' } });
      expect(response.status).to.equal(204);
      expect(response.text).to.equal('');
      expect(await response.events()).to.deep.equal(['DocumentDeleted@document']);
      expect(await server.platform.blobStore.get(`${owner.tenant_id}/${document.id}`)).to.not.equal(null);
      expect((await server.request('GET', `/api/v1/documents/${document.id}`, { headers: as(writer) })).status).to.equal(404);
      const list = await server.request('GET', '/api/v1/documents?limit=1000', { headers: as(admin) });
      expect(list.json.items.map((item: { id: string }) => item.id)).to.not.include(document.id);
      const again = await server.request('DELETE', `/api/v1/documents/${document.id}`, { headers: as(writer) });
      expect(again.status).to.equal(404);
      expect(again.json.code).to.equal('document_not_found');
    });

    it('403 workspace_read_only for a reader; 404 for one who may not read it and another tenant; 401 without a token', async () => {
      const document = await uploaded(writer, [field('workspace_id', workspaceId), file('kept.txt', 'kept')]);
      const refused = await server.request('DELETE', `/api/v1/documents/${document.id}`, { headers: as(reader) });
      expect(refused.status).to.equal(403);
      expect(refused.json.code).to.equal('workspace_read_only');
      expect(await refused.events()).to.deep.equal(['AccessDenied@accessDenial']);
      for (const account of [stranger, outsider]) {
        const response = await server.request('DELETE', `/api/v1/documents/${document.id}`, { headers: as(account) });
        expect(response.status).to.equal(404);
        expect(response.json.code).to.equal('document_not_found');
      }
      expect((await server.request('DELETE', `/api/v1/documents/${document.id}`)).status).to.equal(401);
      expect((await server.request('GET', `/api/v1/documents/${document.id}`, { headers: as(writer) })).status).to.equal(200);
    });
  });

  describe('the documents quota', () => {
    let tenant: Account;
    let tenantWorkspace: string;
    let root: Record<string, string>;

    before(async () => {
      tenant = await registerOwner(server, 'docs-quota-org');
      tenantWorkspace = await defaultWorkspace(tenant);
      const login = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
      root = { authorization: `Bearer ${login.json.token}` };
    });

    it('429 quota_exceeded past the limit, for uploads and texts alike, leaving nothing behind; deleting frees a place', async () => {
      const override = await server.request('PUT', `/api/v1/admin/tenants/${tenant.tenant_id}/quotas`, { headers: root, body: { overrides: { documents: 2 }, reason: 'documents suite' } });
      expect(override.status, override.text).to.equal(200);
      const first = await uploaded(tenant, [field('workspace_id', tenantWorkspace), file('one.txt', 'one')]);
      expect((await addText(tenant, { workspace_id: tenantWorkspace, title: 'Two', text: 'two' })).status).to.equal(201);
      const before = blobsOf(tenant.tenant_id);
      expect(before).to.have.length(2);
      const refused = await upload(tenant, [field('workspace_id', tenantWorkspace), file('three.txt', 'three')]);
      await expectRefusedWithoutTrace(refused, 429, 'quota_exceeded', tenant.tenant_id, before);
      expect(refused.json).to.deep.include({ quota: 'documents', limit: 2, used: 2, resets_at: null });
      await expectRefusedWithoutTrace(await addText(tenant, { workspace_id: tenantWorkspace, title: 'Three', text: 'three' }), 429, 'quota_exceeded', tenant.tenant_id, before);
      const quotas = await server.request('GET', `/api/v1/admin/tenants/${tenant.tenant_id}/quotas`, { headers: root });
      expect(quotas.json.used.documents).to.equal(2);
      expect((await server.request('DELETE', `/api/v1/documents/${first.id}`, { headers: as(tenant) })).status).to.equal(204);
      expect((await upload(tenant, [field('workspace_id', tenantWorkspace), file('three.txt', 'three')])).status).to.equal(201);
    });
  });

  describe('the audit log, after everything above', () => {
    it('puts every event the suite recorded in an audit log with its actor, the document events among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['DocumentAdded', 'DocumentReindexRequested', 'DocumentDeleted']);
    });
  });
});
