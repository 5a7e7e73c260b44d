// Permission-aware retrieval over the real platform: documents in three workspaces of one
// organization, indexed by the indexing saga; teams and grants made through the org routes.
// One upload of every supported type through the documents routes is searchable afterwards,
// cited in a chat answer to the owner and never to a member without the grant.
// A member never gets a chunk of a workspace their teams were not granted (nor after the
// grant is taken back); an admin and the owner get every workspace; another organization
// gets nothing. The same holds with hybrid retrieval, vectors from a local
// OpenAI-compatible embeddings server. And through the platform's saga delivery: a deleted
// document leaves retrieval, and an embeddings endpoint that stays down ends as a failed
// document after the last attempt, retried with back-off. A PDF whose text takes longer than
// EXTRACTION_TIMEOUT_MS to read fails, not retried, and the next is read.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { handleCommand } from '../../application/command-handling/handle-command';
import { retrievePassages } from '../../application/knowledge/retrieval';
import type { Passage } from '../../application/ports/assistant-engine';
import { type DocumentCommand, documentDecider, documentEvents, documentStream } from '../../domain/document/document';
import { userContext } from '../support/context';
import { LocalEmbeddingsServer } from '../support/embeddings-server';
import { type FormPart, docxOf, multipartForm, pdfOf, pdfOfPages } from '../support/documents';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

const documentAggregate = { decider: documentDecider, events: documentEvents };

interface Organization {
  owner: Account;
  admin: Account;
  /** In the sales team, which is granted the sales workspace. */
  seller: Account;
  /** In the people team, which is granted no workspace. */
  outsider: Account;
  workspaces: { general: string; sales: string; hr: string };
  salesTeam: string;
}

const TEXTS = {
  general: '# Office\nThe office handbook says the kitchen is cleaned on Fridays.',
  sales: '# Discounts\nThe sales handbook allows a discount of ten percent for yearly plans. Refunds are paid within five days.',
  hr: '# Salaries\nThe HR handbook lists the salary bands of every role.',
};

describe('permission-aware retrieval', function () {
  this.timeout(60_000);

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  async function createWorkspace(server: TestServer, owner: Account, name: string): Promise<string> {
    const created = await gql(server, 'mutation ($name: String!) { create_workspace(name: $name) { id } }', { name }, owner.token);
    if (created.json.errors) throw new Error(JSON.stringify(created.json.errors));
    return created.json.data.create_workspace.id;
  }

  async function createTeam(server: TestServer, admin: Account, name: string, members: string[], workspaceIds: string[]): Promise<string> {
    const team = await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name } });
    expect(team.status, team.text).to.equal(201);
    const staffed = await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(admin), body: { members: members.map((user_id) => ({ user_id })) } });
    expect(staffed.status, staffed.text).to.equal(200);
    const granted = await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(admin), body: { workspace_ids: workspaceIds } });
    expect(granted.status, granted.text).to.equal(200);
    return team.json.id;
  }

  /** Adds a Markdown document as `by` would, its file in the platform's blob store; resolves once the indexing saga has recorded an outcome. */
  async function addDocument(server: TestServer, by: Account, workspaceId: string, title: string, text: string): Promise<string> {
    const documentId = randomUUID();
    const bytes = Buffer.from(text);
    const blobKey = `${by.tenant_id}/${documentId}`;
    await server.platform.blobStore.put(blobKey, bytes, 'text/markdown');
    const command: DocumentCommand = {
      type: 'AddDocument',
      data: {
        document_id: documentId,
        tenant_id: by.tenant_id,
        workspace_id: workspaceId,
        title,
        source: 'text',
        filename: null,
        content_type: 'text/markdown',
        size_bytes: bytes.length,
        sha256: 'not-checked-here',
        blob_key: blobKey,
        added_by: by.user_id,
      },
    };
    await handleCommand(server.platform.commands, documentAggregate, documentStream(documentId), command, userContext({ tenant_id: by.tenant_id, actor: { kind: 'user', id: by.user_id } }));
    await indexingOutcome(server, documentId);
    return documentId;
  }

  async function indexingOutcome(server: TestServer, documentId: string, generation = 1): Promise<string> {
    let outcome = '';
    await eventually(
      async () => {
        const events = await server.platform.eventStore.readStream(documentStream(documentId));
        const last = events.filter((event) => ['DocumentIndexed', 'DocumentIndexingFailed'].includes(event.type) && (event.data as { generation: number }).generation === generation).at(-1);
        outcome = last?.type ?? '';
        return outcome !== '';
      },
      20_000,
      `the indexing outcome of ${documentId}`,
    );
    return outcome;
  }

  async function organization(server: TestServer, slug: string): Promise<Organization> {
    const owner = await registerOwner(server, slug);
    const admin = await joinAs(server, await registerOwner(server, `${slug}-adm`), owner.tenant_id, 'admin');
    const seller = await joinAs(server, await registerOwner(server, `${slug}-sel`), owner.tenant_id, 'member');
    const outsider = await joinAs(server, await registerOwner(server, `${slug}-out`), owner.tenant_id, 'member');
    const general = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id as string;
    const sales = await createWorkspace(server, owner, 'Sales');
    const hr = await createWorkspace(server, owner, 'HR');
    const salesTeam = await createTeam(server, admin, 'Sales team', [seller.user_id], [sales]);
    await createTeam(server, admin, 'People team', [outsider.user_id], []);
    return { owner, admin, seller, outsider, workspaces: { general, sales, hr }, salesTeam };
  }

  const retrieve = (server: TestServer, asker: Account & { role: 'owner' | 'admin' | 'member' }, question: string, workspaceId?: string): Promise<Passage[]> =>
    retrievePassages(
      { readStore: server.platform.readStore, searchIndex: server.platform.searchIndex, embeddings: server.platform.embeddings },
      { tenant_id: asker.tenant_id, user_id: asker.user_id, role: asker.role },
      question,
      { workspaceId, limit: 20 },
    );
  const titles = (passages: readonly Passage[]): string[] => [...new Set(passages.map((passage) => passage.title))].sort();

  async function documentsOf(server: TestServer, org: Organization): Promise<void> {
    await addDocument(server, org.owner, org.workspaces.general, 'Office handbook', TEXTS.general);
    await addDocument(server, org.seller, org.workspaces.sales, 'Sales handbook', TEXTS.sales);
    await addDocument(server, org.admin, org.workspaces.hr, 'HR handbook', TEXTS.hr);
  }

  describe('by BM25', () => {
    let server: TestServer;
    let org: Organization;
    let other: Organization;

    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12' }, { sagaRetryPollMs: 50 });
      org = await organization(server, 'retrieval-org');
      other = await organization(server, 'retrieval-other');
      await documentsOf(server, org);
      await addDocument(server, other.owner, other.workspaces.general, 'Foreign handbook', '# Foreign\nThe handbook of another organization, with salary bands and discounts.');
    });
    after(() => server.close());

    const owner = () => ({ ...org.owner, role: 'owner' as const });
    const admin = () => ({ ...org.admin, role: 'admin' as const });
    const seller = () => ({ ...org.seller, role: 'member' as const });
    const outsider = () => ({ ...org.outsider, role: 'member' as const });

    it('gives the owner and an admin passages of every workspace of their organization, and nothing of another', async () => {
      for (const asker of [owner(), admin()]) {
        expect(titles(await retrieve(server, asker, 'handbook'))).to.deep.equal(['HR handbook', 'Office handbook', 'Sales handbook']);
        expect(titles(await retrieve(server, asker, 'salary bands'))).to.deep.equal(['HR handbook']);
      }
    });

    it('gives a member only the workspaces their teams were granted', async () => {
      const passages = await retrieve(server, seller(), 'handbook salary bands discount kitchen');
      expect(titles(passages)).to.deep.equal(['Sales handbook']);
      expect(passages[0]).to.deep.include({ id: '1', title: 'Sales handbook', heading: 'Discounts' });
      expect(await retrieve(server, seller(), 'salary bands')).to.deep.equal([]);
      expect(await retrieve(server, seller(), 'handbook', org.workspaces.hr)).to.deep.equal([]);
      expect(titles(await retrieve(server, seller(), 'handbook', org.workspaces.sales))).to.deep.equal(['Sales handbook']);
    });

    it('never gives a member without a grant a chunk of any workspace, whatever the question', async () => {
      for (const question of ['handbook', 'salary bands', 'discount', 'kitchen Fridays', 'HR handbook salary bands of every role']) {
        expect(await retrieve(server, outsider(), question), question).to.deep.equal([]);
      }
      for (const workspaceId of Object.values(org.workspaces)) expect(await retrieve(server, outsider(), 'handbook', workspaceId)).to.deep.equal([]);
    });

    it('takes the workspace away as soon as the grant is withdrawn, and gives it back with the grant', async () => {
      const revoked = await server.request('PUT', `/api/v1/org/teams/${org.salesTeam}/workspaces`, { headers: as(org.admin), body: { workspace_ids: [] } });
      expect(revoked.status).to.equal(200);
      expect(await retrieve(server, seller(), 'handbook')).to.deep.equal([]);
      const regranted = await server.request('PUT', `/api/v1/org/teams/${org.salesTeam}/workspaces`, { headers: as(org.admin), body: { workspace_ids: [org.workspaces.sales] } });
      expect(regranted.status).to.equal(200);
      expect(titles(await retrieve(server, seller(), 'handbook'))).to.deep.equal(['Sales handbook']);
    });

    it('takes the workspace away from a member taken out of the team', async () => {
      const emptied = await server.request('PUT', `/api/v1/org/teams/${org.salesTeam}/members`, { headers: as(org.admin), body: { members: [] } });
      expect(emptied.status).to.equal(200);
      expect(await retrieve(server, seller(), 'handbook')).to.deep.equal([]);
      await server.request('PUT', `/api/v1/org/teams/${org.salesTeam}/members`, { headers: as(org.admin), body: { members: [{ user_id: org.seller.user_id }] } });
      expect(titles(await retrieve(server, seller(), 'handbook'))).to.deep.equal(['Sales handbook']);
    });

    describe('documents uploaded through the routes', () => {
      const TYPES: Array<{ name: string; word: string; heading: string | null; file: () => Promise<FormPart> }> = [
        { name: 'returns.pdf', word: 'pallets', heading: null, file: async () => upload('returns.pdf', pdfOf(['Pallet returns', 'Pallets go back to the depot in Hull.'])) },
        { name: 'loyalty.docx', word: 'stamps', heading: 'Loyalty', file: async () => upload('loyalty.docx', await docxOf([{ heading: 1, text: 'Loyalty' }, 'Members collect stamps on every visit.'])) },
        { name: 'garden.html', word: 'gazebo', heading: 'Garden', file: async () => upload('garden.html', '<html><body><h1>Garden</h1><p>The gazebo is booked through reception.</p></body></html>') },
        { name: 'bikes.md', word: 'tandem', heading: 'Bikes', file: async () => upload('bikes.md', '# Bikes\n\nA tandem can be hired for the whole day.\n') },
        { name: 'tours.txt', word: 'lighthouse', heading: null, file: async () => upload('tours.txt', 'Tours of the lighthouse start at ten every Sunday.\n') },
        { name: 'menu.csv', word: 'pumpkin', heading: null, file: async () => upload('menu.csv', 'dish,price\npumpkin soup,4.50\nbread,1.20\n') },
      ];
      const upload = (filename: string, content: Buffer | string): FormPart => ({ name: 'file', filename, content: Buffer.isBuffer(content) ? content : Buffer.from(content) });
      const ids = new Map<string, string>();

      before(async () => {
        for (const type of TYPES) {
          const form = multipartForm([{ name: 'workspace_id', value: org.workspaces.sales }, await type.file()]);
          const response = await server.request('POST', '/api/v1/documents', { headers: { ...as(org.owner), ...form.headers }, rawBody: form.rawBody });
          expect(response.status, `${type.name}: ${response.text}`).to.equal(201);
          expect(await indexingOutcome(server, response.json.id), type.name).to.equal('DocumentIndexed');
          ids.set(type.word, response.json.id);
        }
      });

      it('makes one upload of every supported type ready and searchable, under its heading', async () => {
        for (const type of TYPES) {
          const id = ids.get(type.word)!;
          const document = await server.request('GET', `/api/v1/documents/${id}`, { headers: as(org.owner) });
          expect(document.json, type.name).to.deep.include({ status: 'ready', generation: 1 });
          expect(document.json.chunks, type.name).to.be.at.least(1);
          const passages = await retrieve(server, owner(), type.word);
          expect(passages[0], type.name).to.deep.include({ document_id: id, heading: type.heading });
          expect(passages[0].text.toLowerCase(), type.name).to.contain(type.word);
          expect(titles(await retrieve(server, seller(), type.word)), type.name).to.have.length(1);
          expect(await retrieve(server, outsider(), type.word), type.name).to.deep.equal([]);
        }
      });

      it('cites the document in a chat answer to the owner, and gives a member without the grant no citation and the no-answer reply', async () => {
        const asked = { message: 'Where do the pallets go back to?' };
        const forOwner = await server.request('POST', '/api/v1/chat', { headers: as(org.owner), body: asked });
        expect(forOwner.status, forOwner.text).to.equal(200);
        expect(forOwner.json.answer.answered_from_knowledge).to.equal(true);
        expect(forOwner.json.answer.citations.map((citation: { document_id: string }) => citation.document_id)).to.include(ids.get('pallets'));
        expect(forOwner.json.answer.text).to.contain('Hull');
        const forOutsider = await server.request('POST', '/api/v1/chat', { headers: as(org.outsider), body: asked });
        expect(forOutsider.status, forOutsider.text).to.equal(200);
        expect(forOutsider.json.answer).to.deep.include({ answered_from_knowledge: false, citations: [] });
        expect(forOutsider.json.answer.text).to.not.contain('Hull');
      });

      it('rebuilds a document on POST /documents/{id}/reindex and forgets it on DELETE', async () => {
        const id = ids.get('tandem')!;
        const reindexed = await server.request('POST', `/api/v1/documents/${id}/reindex`, { headers: as(org.owner) });
        expect(reindexed.status, reindexed.text).to.equal(202);
        expect(await indexingOutcome(server, id, 2)).to.equal('DocumentIndexed');
        expect((await retrieve(server, owner(), 'tandem'))[0].document_id).to.equal(id);
        const deleted = await server.request('DELETE', `/api/v1/documents/${id}`, { headers: as(org.owner) });
        expect(deleted.status, deleted.text).to.equal(204);
        await eventually(async () => (await retrieve(server, owner(), 'tandem')).length === 0, 20_000, 'the deleted document to leave retrieval');
        await eventually(async () => (await server.platform.blobStore.get(`${org.owner.tenant_id}/${id}`)) === null, 20_000, 'the file to be deleted');
      });
    });

    it('drops a deleted document from retrieval (the saga removes its chunks and its file)', async () => {
      const documentId = await addDocument(server, org.owner, org.workspaces.general, 'Parking rules', '# Parking\nVisitors park in the zeppelin hangar.');
      expect(titles(await retrieve(server, owner(), 'zeppelin hangar'))).to.deep.equal(['Parking rules']);
      await handleCommand(server.platform.commands, documentAggregate, documentStream(documentId), { type: 'DeleteDocument', data: { deleted_by: org.owner.user_id } }, userContext({ tenant_id: org.owner.tenant_id }));
      await eventually(async () => (await retrieve(server, owner(), 'zeppelin hangar')).length === 0, 20_000, 'the deleted document to leave retrieval');
      await eventually(async () => (await server.platform.blobStore.get(`${org.owner.tenant_id}/${documentId}`)) === null, 20_000, 'the file to be deleted');
    });
  });

  describe('by hybrid retrieval (BM25 and vectors)', () => {
    let server: TestServer;
    let embeddingsServer: LocalEmbeddingsServer;
    let org: Organization;

    before(async () => {
      embeddingsServer = await LocalEmbeddingsServer.start();
      server = await startTestServer(
        { SCRYPT_LOG_N: '12', EMBEDDINGS_BASE_URL: embeddingsServer.baseUrl, EMBEDDINGS_API_KEY: 'sk-local-test', EMBEDDINGS_MODEL: 'test-embed-1', SAGA_MAX_ATTEMPTS: '2' },
        { sagaRetryPollMs: 50 },
      );
      org = await organization(server, 'hybrid-org');
      await documentsOf(server, org);
    });
    after(async () => {
      await server.close();
      await embeddingsServer.close();
    });

    it('finds a passage by meaning that shares no word with the question', async () => {
      expect(server.platform.embeddings?.model).to.equal('test-embed-1');
      expect(embeddingsServer.requests.every((request) => request.authorization === 'Bearer sk-local-test')).to.equal(true);
      const passages = await retrieve(server, { ...org.owner, role: 'owner' }, 'reimbursement');
      expect(passages[0]).to.deep.include({ title: 'Sales handbook', heading: 'Discounts' });
    });

    it("keeps vectors inside the asker's workspaces too", async () => {
      const seller = { ...org.seller, role: 'member' as const };
      const outsider = { ...org.outsider, role: 'member' as const };
      expect(titles(await retrieve(server, seller, 'salary bands of every role in HR'))).to.deep.equal(['Sales handbook']);
      expect(await retrieve(server, outsider, 'salary bands of every role in HR')).to.deep.equal([]);
      expect(await retrieve(server, outsider, 'reimbursement')).to.deep.equal([]);
    });

    it('answers by BM25 alone while the embeddings endpoint is down', async () => {
      embeddingsServer.down = true;
      try {
        expect(titles(await retrieve(server, { ...org.owner, role: 'owner' }, 'salary bands'))).to.deep.equal(['HR handbook']);
      } finally {
        embeddingsServer.down = false;
      }
    });

    it('retries indexing while the endpoint is down, with back-off, and records the document as failed after the last attempt', async () => {
      embeddingsServer.down = true;
      try {
        const before = embeddingsServer.requests.length;
        const documentId = randomUUID();
        const blobKey = `${org.owner.tenant_id}/${documentId}`;
        await server.platform.blobStore.put(blobKey, Buffer.from('# Late\nA document added while the endpoint is down.'), 'text/markdown');
        await handleCommand(
          server.platform.commands,
          documentAggregate,
          documentStream(documentId),
          {
            type: 'AddDocument',
            data: {
              document_id: documentId,
              tenant_id: org.owner.tenant_id,
              workspace_id: org.workspaces.general,
              title: 'Late',
              source: 'text',
              filename: null,
              content_type: 'text/markdown',
              size_bytes: 10,
              sha256: 'x',
              blob_key: blobKey,
              added_by: org.owner.user_id,
            },
          },
          userContext({ tenant_id: org.owner.tenant_id }),
        );
        expect(await indexingOutcome(server, documentId)).to.equal('DocumentIndexingFailed');
        const events = await server.platform.eventStore.readStream(documentStream(documentId));
        expect(events.map((event) => event.type)).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexingFailed']);
        expect(events[2].data).to.deep.include({ generation: 1, reason: 'indexing gave up after 2 attempts: the embeddings endpoint answered 503 (model_loading)' });
        // Two attempts, the second after the first's back-off, each one embeddings request (the client itself retries twice).
        expect(embeddingsServer.requests.length - before).to.equal(6);
        expect(await server.platform.sagaDelivery.listFailures('document_indexing-v1')).to.deep.equal([]);
      } finally {
        embeddingsServer.down = false;
      }
    });
  });

  describe("a document's text read on a worker thread, within its limits", () => {
    let server: TestServer;
    let owner: Account;
    let workspaceId: string;

    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', EXTRACTION_TIMEOUT_MS: '1000', METRICS_PUBLIC: 'true' }, { sagaRetryPollMs: 50 });
      owner = await registerOwner(server, 'extraction-org');
      workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    });
    after(() => server.close());

    const uploadPdf = async (filename: string, pdf: Buffer): Promise<string> => {
      const form = multipartForm([{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename, content: pdf }]);
      const response = await server.request('POST', '/api/v1/documents', { headers: { ...as(owner), ...form.headers }, rawBody: form.rawBody });
      expect(response.status, response.text).to.equal(201);
      return response.json.id;
    };

    it('fails a PDF that takes longer than EXTRACTION_TIMEOUT_MS to read, not retried, answering requests meanwhile; the next PDF is read', async () => {
      const slow = await uploadPdf('manual.pdf', pdfOfPages(2000, 60));
      // Answered while the worker reads.
      expect((await server.request('GET', '/api/v1/documents', { headers: as(owner) })).status).to.equal(200);
      expect(await indexingOutcome(server, slow)).to.equal('DocumentIndexingFailed');
      await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
      const failed = await server.request('GET', `/api/v1/documents/${slow}`, { headers: as(owner) });
      expect(failed.json).to.deep.include({ status: 'failed', failure_reason: 'the file could not be read as application/pdf: the document took longer than 1 s to read' });
      const events = await server.platform.eventStore.readStream(documentStream(slow));
      expect(events.map((event) => event.type)).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexingFailed']);

      // A PDF: the new worker has loaded pdf.js before it takes it, so its second is for reading it.
      const next = await uploadPdf('hours.pdf', pdfOf(['Opening hours', 'The shop opens at nine.']));
      expect(await indexingOutcome(server, next)).to.equal('DocumentIndexed');
      const metrics = await server.request('GET', '/metrics');
      expect(metrics.text).to.match(/text_extractions_total\{outcome="timed_out"\} 1\n/);
      expect(metrics.text).to.match(/text_extractions_total\{outcome="read"\} 1\n/);
      expect(metrics.text).to.match(/text_extractions_waiting 0\n/);
    });
  });
});
