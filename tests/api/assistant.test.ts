// The assistant end to end on the embedded defaults (no model configured): documents of every
// supported type uploaded through the API, indexed by the saga into the SQLite FTS5 index, and
// found; a question a PDF answers gets that passage with a citation; an unrelated one the
// plain no-answer reply; a member without the workspace's grant never gets its text.

import { expect } from 'chai';
import { pdfOf, docxOf, multipartForm } from '../support/documents';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { expectEveryEventAudited } from '../support/audit';

describe('the assistant on its embedded defaults: upload, index, retrieve, answer with citations', function () {
  this.timeout(60_000);
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let handbook: string;
  let secrets: string;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  const upload = async (workspaceId: string, filename: string, content: Buffer): Promise<string> => {
    const form = multipartForm([{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename, content }]);
    const response = await server.request('POST', '/api/v1/documents', { headers: { ...as(owner), ...form.headers }, rawBody: form.rawBody });
    expect(response.status, `${filename}: ${response.text}`).to.equal(201);
    return response.json.id;
  };
  const ready = async (documentId: string): Promise<void> => {
    await eventually(
      async () => {
        const status = (await server.request('GET', `/api/v1/documents/${documentId}`, { headers: as(owner) })).json.status;
        if (status === 'failed') throw new Error(`document ${documentId} failed to index`);
        return status === 'ready';
      },
      20_000,
      `document ${documentId} indexed`,
    );
  };
  const ask = (account: Account, message: string, workspaceId?: string) =>
    server.request('POST', '/api/v1/chat', { headers: as(account), body: workspaceId ? { message, workspace_id: workspaceId } : { message } });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { sagaRetryPollMs: 20 });
    owner = await registerOwner(server, 'assistant-org');
    member = await joinAs(server, await registerOwner(server, 'assistant-mem-home', 'assistant-mem@example.com'), owner.tenant_id, 'member');
    handbook = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    const created = await server.request('POST', '/graphql', {
      headers: as(owner),
      body: { query: 'mutation ($name: String!) { create_workspace(name: $name) { id } }', variables: { name: 'Secrets' } },
    });
    secrets = created.json.data?.create_workspace?.id;
    expect(secrets, JSON.stringify(created.json)).to.be.a('string');
    // The member's team may read the handbook only.
    const team = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Support' } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(owner), body: { members: [{ user_id: member.user_id }] } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(owner), body: { workspace_ids: [handbook] } });
  });
  after(() => server.close());

  it('indexes one upload of every supported type, and each is found afterwards', async () => {
    const uploads: Array<[string, Buffer, string]> = [
      ['refunds.pdf', pdfOf(['Refund policy', 'Customers may return any product within 30 days for a full refund.']), 'return any product within 30 days'],
      ['shipping.docx', await docxOf([{ heading: 1, text: 'Shipping' }, 'Parcels leave our warehouse in Rotterdam every weekday before noon.']), 'warehouse in Rotterdam'],
      ['hours.html', Buffer.from('<html><body><h1>Opening hours</h1><p>The helpdesk answers calls from 8 to 18 on weekdays.</p></body></html>'), 'helpdesk answers calls'],
      ['warranty.md', Buffer.from('# Warranty\n\nEvery blender carries a two-year warranty against motor failure.\n'), 'two-year warranty'],
      ['care.txt', Buffer.from('Clean the espresso machine descaler monthly with citric acid.\n'), 'descaler monthly'],
      ['prices.csv', Buffer.from('product,price\nkettle,39 euro\ntoaster,49 euro\n'), 'kettle'],
    ];
    for (const [filename, content, phrase] of uploads) {
      const id = await upload(handbook, filename, content);
      await ready(id);
      const answer = await ask(owner, phrase);
      expect(answer.status, answer.text).to.equal(200);
      expect(answer.json.answer.citations.map((citation: { document_id: string }) => citation.document_id), `${filename} is found by "${phrase}"`).to.include(id);
    }
  });

  it('answers a question the PDF answers with its passage and a citation, and an unrelated one plainly with nothing', async () => {
    const answered = await ask(owner, 'Within how many days can a customer return a product for a refund?');
    expect(answered.json.answer).to.include({ answered_from_knowledge: true, model: 'extractive' });
    expect(answered.json.answer.text).to.contain('within 30 days for a full refund');
    expect(answered.json.answer.citations[0]).to.include({ title: 'refunds' });

    const unrelated = await ask(owner, 'What is the airspeed velocity of an unladen swallow?');
    expect(unrelated.json.answer.answered_from_knowledge).to.equal(false);
    expect(unrelated.json.answer.citations).to.deep.equal([]);
    expect(unrelated.json.answer.text).to.equal('I could not find anything about this in the knowledge base, so I cannot answer it from there. Try other words, or ask a person.');
  });

  it("never gives a member a chunk of a workspace their teams were not granted, in retrieval or citations", async () => {
    const secret = await upload(secrets, 'launch.txt', Buffer.from('Project Nightingale launches on the ninth of March with a new espresso grinder.\n'));
    await ready(secret);
    const asOwner = await ask(owner, 'When does Project Nightingale launch?');
    expect(asOwner.json.answer.citations.map((citation: { document_id: string }) => citation.document_id)).to.include(secret);

    const asMember = await ask(member, 'When does Project Nightingale launch?');
    expect(asMember.status).to.equal(200);
    expect(asMember.json.answer.citations.map((citation: { document_id: string }) => citation.document_id)).to.not.include(secret);
    expect(asMember.json.answer.text).to.not.contain('Nightingale launches');
    const named = await ask(member, 'When does Project Nightingale launch?', secrets);
    expect(named.status).to.equal(404);
  });

  it('deleting a document removes its chunks', async () => {
    const id = await upload(handbook, 'obsolete.txt', Buffer.from('The loyalty card gives a zebra-striped discount on Tuesdays.\n'));
    await ready(id);
    expect((await ask(owner, 'zebra-striped discount')).json.answer.citations.map((citation: { document_id: string }) => citation.document_id)).to.include(id);
    expect((await server.request('DELETE', `/api/v1/documents/${id}`, { headers: as(owner) })).status).to.be.oneOf([200, 204]);
    await eventually(async () => !(await ask(owner, 'zebra-striped discount')).json.answer.citations.some((citation: { document_id: string }) => citation.document_id === id), 10_000, 'chunks removed');
  });

  describe('the audit log, after everything above', () => {
    it('puts every event it recorded in an audit log with its actor, the documents and conversations among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexed', 'DocumentDeleted', 'ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
    });
  });
});
