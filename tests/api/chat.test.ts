// Chat (spec 4.6): POST /api/v1/chat and POST /api/v1/chat/stream, with the embedded extractive
// engine and with a local OpenAI-compatible server streaming scripted completions. Retrieval
// reads an in-memory search index seeded by the suite (tests/support/search-index.ts).

import { randomUUID } from 'node:crypto';
import type pino from 'pino';
import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { AssistantUnavailableError, chat, operatorAsker } from '../../application/chat/chat';
import { conversationAggregate } from '../../application/conversation/conversations';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import { changeTenantSettings, suspendTenant } from '../../application/tenant/tenant-commands';
import { workspaceAggregate } from '../../application/workspace/workspaces';
import { conversationStream } from '../../domain/conversation/conversation';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { workspaceStream } from '../../domain/workspace/workspace';
import { createLogger } from '../../infrastructure/logging/logger';
import { DAILY_USAGE, type DailyUsageDocument, dailyUsageId, dayKey } from '../../projections/daily-usage';
import { TENANT_QUOTAS, type TenantQuotaDocument, monthKey } from '../../projections/tenant-quotas';
import { userContext } from '../support/context';
import { type Account, joinAs, registerOwner, widgetTokenOf } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { InMemorySearchIndex, chunksOf } from '../support/search-index';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Frame {
  event: string | null;
  data: Json;
  comment: string | null;
}

/** Server-Sent Events frames of a complete body. */
function framesOf(text: string): Frame[] {
  return text
    .split('\n\n')
    .filter((block) => block.length > 0)
    .map((block) => {
      const lines = block.split('\n');
      const comment = lines.find((line) => line.startsWith(':'));
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? null;
      const data = lines.find((line) => line.startsWith('data: '));
      return { event, data: data ? JSON.parse(data.slice(6)) : null, comment: comment ? comment.slice(1).trim() : null };
    });
}

/** A streaming response read frame by frame, as a browser's EventSource would. */
class StreamReader {
  private buffer = '';
  readonly frames: Frame[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
  }

  /** Reads until a frame satisfies `wanted`; null when the stream ended first. */
  async until(wanted: (frame: Frame) => boolean): Promise<Frame | null> {
    for (;;) {
      const found = this.frames.find(wanted);
      if (found) return found;
      const { value, done } = await this.reader.read();
      if (done) return null;
      this.buffer += this.decoder.decode(value, { stream: true });
      let end: number;
      while ((end = this.buffer.indexOf('\n\n')) >= 0) {
        this.frames.push(...framesOf(this.buffer.slice(0, end + 2)));
        this.buffer = this.buffer.slice(end + 2);
      }
    }
  }
}

describe('chat (/api/v1/chat, /api/v1/chat/stream)', () => {
  const index = new InMemorySearchIndex();
  const logLines: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) } as pino.DestinationStream);
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let colleague: Account;
  let outsider: Account;
  let defaultWorkspaceId: string;
  let privateWorkspaceId: string;
  const refundsDoc = `doc-refunds-${randomUUID()}`;
  const salaryDoc = `doc-salary-${randomUUID()}`;

  const as = (account: Account, headers: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...headers });
  const ask = (account: Account, body: Json, headers: Record<string, string> = {}) => server.request('POST', '/api/v1/chat', { headers: as(account, headers), body });
  const conversationEvents = async (target: TestServer, conversationId: string): Promise<DomainRecordedEvent[]> => target.platform.eventStore.readStream(conversationStream(conversationId));
  const typesOf = (events: DomainRecordedEvent[]): string[] => events.map((event) => event.type);

  async function createWorkspace(target: TestServer, tenantId: string, name: string): Promise<string> {
    const workspaceId = randomUUID();
    const result = await handleCommand(
      target.platform.commands,
      workspaceAggregate,
      workspaceStream(workspaceId),
      { type: 'CreateWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId, name, is_default: false } },
      userContext({ tenant_id: tenantId }),
    );
    await target.platform.readYourWrites(result.position);
    return workspaceId;
  }

  async function defaultWorkspaceOf(target: TestServer, account: Account): Promise<string> {
    const listed = await target.request('GET', '/api/v1/org/workspaces', { headers: as(account) });
    return listed.json.items.find((workspace: Json) => workspace.is_default).id;
  }

  /** A team granting `workspaceIds` to `members`, through the org routes. */
  async function grant(target: TestServer, by: Account, members: Account[], workspaceIds: string[]): Promise<void> {
    const team = await target.request('POST', '/api/v1/org/teams', { headers: as(by), body: { name: `Team ${randomUUID().slice(0, 8)}` } });
    await target.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(by), body: { members: members.map((account) => ({ user_id: account.user_id })) } });
    await target.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(by), body: { workspace_ids: workspaceIds } });
  }

  async function seedKnowledge(tenantId: string, defaultId: string, privateId: string): Promise<void> {
    await index.replaceDocument(
      tenantId,
      refundsDoc,
      chunksOf({ tenant_id: tenantId, workspace_id: defaultId, document_id: refundsDoc, title: 'Refund policy' }, [
        'Refunds are issued within 14 days of the request, to the card you paid with. Gift cards cannot be refunded.',
        'Orders ship from Lyon within two business days.',
      ]),
    );
    await index.replaceDocument(
      tenantId,
      salaryDoc,
      chunksOf({ tenant_id: tenantId, workspace_id: privateId, document_id: salaryDoc, title: 'Salary bands' }, ['Engineering salary bands run from 70k to 90k, reviewed every April.']),
    );
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { searchIndex: index, logger });
    owner = await registerOwner(server, 'chat-org');
    admin = await joinAs(server, await registerOwner(server, 'chat-adm-home', 'chat-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'chat-mem-home', 'chat-mem@example.com'), owner.tenant_id, 'member');
    colleague = await joinAs(server, await registerOwner(server, 'chat-col-home', 'chat-col@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'chat-other-org');
    defaultWorkspaceId = await defaultWorkspaceOf(server, owner);
    privateWorkspaceId = await createWorkspace(server, owner.tenant_id, 'Private');
    await grant(server, owner, [member], [defaultWorkspaceId]);
    await seedKnowledge(owner.tenant_id, defaultWorkspaceId, privateWorkspaceId);
  });
  after(() => server.close());

  describe('POST /chat with the embedded engine', () => {
    it('answers from the knowledge base with a citation, and records the turn on a new conversation', async () => {
      const response = await ask(member, { message: 'How long do refunds take?' });
      expect(response.status, response.text).to.equal(200);
      const { conversation_id, user_message_id, answer, paused } = response.json;
      expect(paused).to.equal(false);
      expect(answer.model).to.equal('extractive');
      expect(answer.answered_from_knowledge).to.equal(true);
      expect(answer.text).to.contain('From "Refund policy" [1]:\n> Refunds are issued within 14 days of the request, to the card you paid with.');
      expect(answer.citations).to.deep.equal([{ passage_id: '1', document_id: refundsDoc, chunk_id: `${refundsDoc}:0`, title: 'Refund policy' }]);

      expect(await response.events()).to.deep.equal(['ConversationStarted@conversation', 'UserMessagePosted@conversation', 'AssistantAnswered@conversation']);
      const [started, posted, answered] = await conversationEvents(server, conversation_id);
      expect(started.data).to.deep.include({ conversation_id, tenant_id: owner.tenant_id, workspace_id: null, channel: 'console', title: 'How long do refunds take?', started_by: { kind: 'user', id: member.user_id } });
      expect(posted.data).to.deep.include({ message_id: user_message_id, text: 'How long do refunds take?', author: { kind: 'user', id: member.user_id }, end_user_token_sealed: null, end_user_session_sealed: null });
      expect(answered.data).to.deep.include({ message_id: answer.message_id, reply_to: user_message_id, text: answer.text, citations: answer.citations, answered_from_knowledge: true, model: 'extractive', usage: null });
      expect((answered.data as Json).latency_ms).to.be.a('number');
      for (const event of [started, posted, answered]) expect(event.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: member.user_id } });
    });

    it('says plainly that the knowledge base has nothing for an unrelated question', async () => {
      const response = await ask(member, { message: 'What is the weather like in Paris?' });
      expect(response.status).to.equal(200);
      expect(response.json.answer).to.deep.include({
        text: 'I could not find anything about this in the knowledge base, so I cannot answer it from there. Try other words, or ask a person.',
        citations: [],
        answered_from_knowledge: false,
        model: 'extractive',
      });
      const answered = (await conversationEvents(server, response.json.conversation_id)).find((event) => event.type === 'AssistantAnswered')!;
      expect(answered.data).to.deep.include({ answered_from_knowledge: false, citations: [] });
    });

    it('never gives a member a passage of a workspace their teams were not granted; an admin gets it', async () => {
      const question = { message: 'What are the engineering salary bands?' };
      const searchesBefore = index.searches.length;
      const asMember = await ask(member, question);
      expect(asMember.json.answer).to.deep.include({ answered_from_knowledge: false, citations: [] });
      expect(asMember.json.answer.text).to.not.contain('70k');
      expect(index.searches.slice(searchesBefore).map((search) => search.workspace_ids)).to.deep.equal([[defaultWorkspaceId]]);
      const events = await conversationEvents(server, asMember.json.conversation_id);
      expect(JSON.stringify(events)).to.not.contain('70k');

      const asAdmin = await ask(admin, question);
      expect(asAdmin.json.answer.answered_from_knowledge).to.equal(true);
      expect(asAdmin.json.answer.citations.map((citation: Json) => citation.document_id)).to.deep.equal([salaryDoc]);
      expect(asAdmin.json.answer.text).to.contain('70k to 90k');
    });

    it('searches only the workspace a conversation started in', async () => {
      const response = await ask(admin, { message: 'What are the engineering salary bands?', workspace_id: defaultWorkspaceId });
      expect(response.json.answer.answered_from_knowledge).to.equal(false);
      const started = (await conversationEvents(server, response.json.conversation_id))[0];
      expect(started.data).to.deep.include({ workspace_id: defaultWorkspaceId });
      const inPrivate = await ask(admin, { message: 'What are the engineering salary bands?', workspace_id: privateWorkspaceId });
      expect(inPrivate.json.answer.citations.map((citation: Json) => citation.document_id)).to.deep.equal([salaryDoc]);
    });

    it('continues a conversation: only the new message and its answer are recorded', async () => {
      const first = await ask(member, { message: 'How long do refunds take?' });
      const second = await ask(member, { message: 'And where do orders ship from?', conversation_id: first.json.conversation_id });
      expect(second.status).to.equal(200);
      expect(second.json.conversation_id).to.equal(first.json.conversation_id);
      expect(second.json.answer.text).to.contain('Orders ship from Lyon within two business days.');
      expect(await second.events()).to.deep.equal(['UserMessagePosted@conversation', 'AssistantAnswered@conversation']);
      expect(typesOf(await conversationEvents(server, first.json.conversation_id))).to.deep.equal([
        'ConversationStarted',
        'UserMessagePosted',
        'AssistantAnswered',
        'UserMessagePosted',
        'AssistantAnswered',
      ]);
    });

    it("titles a conversation by its first message's first line, cut at 80 characters", async () => {
      const long = `${'Refunds '.repeat(20)}end\nsecond line`;
      const response = await ask(member, { message: long });
      const [started] = await conversationEvents(server, response.json.conversation_id);
      const title = (started.data as Json).title as string;
      expect([...title]).to.have.length(80);
      expect(title.endsWith('…')).to.equal(true);
      expect(title.startsWith('Refunds Refunds')).to.equal(true);
      expect(title).to.not.contain('second line');
    });

    it('lets an admin continue any console conversation of the organization, a member their own and those of workspaces they may read (404 otherwise)', async () => {
      const mine = await ask(member, { message: 'How long do refunds take?' });
      const byAdmin = await ask(admin, { message: 'Anything about gift cards?', conversation_id: mine.json.conversation_id });
      expect(byAdmin.status).to.equal(200);
      const byColleague = await ask(colleague, { message: 'Gift cards?', conversation_id: mine.json.conversation_id });
      expect(byColleague.status).to.equal(404);
      expect(byColleague.json.code).to.equal('conversation_not_found');
      expect(await byColleague.events()).to.deep.equal([]);
      const fromOtherOrg = await ask(outsider, { message: 'Gift cards?', conversation_id: mine.json.conversation_id });
      expect([fromOtherOrg.status, fromOtherOrg.json.code]).to.deep.equal([404, 'conversation_not_found']);

      // In a workspace: a colleague whose teams may read it may continue it too.
      const shared = await ask(member, { message: 'How long do refunds take?', workspace_id: defaultWorkspaceId });
      expect((await ask(colleague, { message: 'Gift cards?', conversation_id: shared.json.conversation_id })).status).to.equal(404);
      await grant(server, owner, [colleague], [defaultWorkspaceId]);
      const byGranted = await ask(colleague, { message: 'Gift cards?', conversation_id: shared.json.conversation_id });
      expect(byGranted.status).to.equal(200);
      expect(await byGranted.events()).to.deep.equal(['UserMessagePosted@conversation', 'AssistantAnswered@conversation']);
    });

    it('continues only console conversations: a widget conversation is answered by people, not through /chat', async () => {
      const conversationId = randomUUID();
      const started = await handleCommand(
        server.platform.commands,
        conversationAggregate,
        conversationStream(conversationId),
        { type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: owner.tenant_id, workspace_id: null, channel: 'widget', title: 'Visitor', started_by: { kind: 'end_user', id: 'visitor-1' } } },
        userContext({ tenant_id: owner.tenant_id }),
      );
      await server.platform.readYourWrites(started.position);
      const refused = await ask(owner, { message: 'Hello visitor', conversation_id: conversationId });
      expect([refused.status, refused.json.code]).to.deep.equal([404, 'conversation_not_found']);
    });

    it('opens a resolved conversation again with the new message, then answers', async () => {
      const first = await ask(member, { message: 'How long do refunds take?' });
      const resolved = await handleCommand(
        server.platform.commands,
        conversationAggregate,
        conversationStream(first.json.conversation_id),
        { type: 'ChangeConversationStatus', data: { status: 'resolved' } },
        userContext({ tenant_id: owner.tenant_id }),
      );
      await server.platform.readYourWrites(resolved.position);
      const again = await ask(member, { message: 'One more thing about gift cards', conversation_id: first.json.conversation_id });
      expect(again.json).to.deep.include({ paused: false });
      expect(again.json.answer.answered_from_knowledge).to.equal(true);
      expect(await again.events()).to.deep.equal(['UserMessagePosted@conversation', 'ConversationStatusChanged@conversation', 'AssistantAnswered@conversation']);
    });

    it('is 404 for an unknown or deleted conversation, and for a workspace the caller may not read', async () => {
      const unknown = await ask(member, { message: 'Refunds?', conversation_id: 'no-such-conversation' });
      expect([unknown.status, unknown.json.code]).to.deep.equal([404, 'conversation_not_found']);
      const gone = await ask(member, { message: 'How long do refunds take?' });
      const deleted = await handleCommand(server.platform.commands, conversationAggregate, conversationStream(gone.json.conversation_id), { type: 'DeleteConversation', data: {} }, userContext({ tenant_id: owner.tenant_id }));
      await server.platform.readYourWrites(deleted.position);
      expect((await ask(member, { message: 'Refunds?', conversation_id: gone.json.conversation_id })).status).to.equal(404);
      for (const workspace_id of [privateWorkspaceId, 'no-such-workspace']) {
        const refused = await ask(member, { message: 'Refunds?', workspace_id });
        expect([refused.status, refused.json.code], workspace_id).to.deep.equal([404, 'workspace_not_found']);
        expect(await refused.events()).to.deep.equal([]);
      }
      const foreign = await defaultWorkspaceOf(server, outsider);
      expect((await ask(owner, { message: 'Refunds?', workspace_id: foreign })).status).to.equal(404);
    });

    it('is 409 workspace_mismatch for a workspace other than the conversation’s', async () => {
      const started = await ask(admin, { message: 'Refunds?', workspace_id: defaultWorkspaceId });
      const other = await ask(admin, { message: 'Salary?', conversation_id: started.json.conversation_id, workspace_id: privateWorkspaceId });
      expect([other.status, other.json.code]).to.deep.equal([409, 'workspace_mismatch']);
      expect(await other.events()).to.deep.equal([]);
      const same = await ask(admin, { message: 'Gift cards?', conversation_id: started.json.conversation_id, workspace_id: defaultWorkspaceId });
      expect(same.status).to.equal(200);
    });

    it('records the message but does not answer while a person has taken the conversation over', async () => {
      const started = await ask(member, { message: 'How long do refunds take?' });
      const handedOff = await handleCommand(
        server.platform.commands,
        conversationAggregate,
        conversationStream(started.json.conversation_id),
        { type: 'ChangeConversationStatus', data: { status: 'handed_off' } },
        userContext({ tenant_id: owner.tenant_id }),
      );
      await server.platform.readYourWrites(handedOff.position);
      const paused = await ask(member, { message: 'Hello? Anyone?', conversation_id: started.json.conversation_id });
      expect(paused.status).to.equal(200);
      expect(paused.json).to.deep.include({ conversation_id: started.json.conversation_id, answer: null, paused: true });
      expect(await paused.events()).to.deep.equal(['UserMessagePosted@conversation']);

      const streamed = await server.request('POST', '/api/v1/chat/stream', { headers: as(member), body: { message: 'Still there?', conversation_id: started.json.conversation_id } });
      expect(streamed.status).to.equal(200);
      const frames = framesOf(streamed.text).filter((frame) => frame.event);
      expect(frames.map((frame) => frame.event)).to.deep.equal(['done']);
      expect(frames[0].data).to.deep.include({ conversation_id: started.json.conversation_id, message_id: null, paused: true, answered_from_knowledge: null, model: null });
      expect(await streamed.events()).to.deep.equal(['UserMessagePosted@conversation']);
    });

    it('stores X-End-User-Token and X-End-User-Session sealed: never in an event in clear, never in a log', async () => {
      const token = `eu-token-${randomUUID()}`;
      const session = `eu-session-${randomUUID()}`;
      const response = await ask(member, { message: 'How long do refunds take?' }, { 'x-end-user-token': token, 'x-end-user-session': session });
      expect(response.status).to.equal(200);
      const posted = (await conversationEvents(server, response.json.conversation_id)).find((event) => event.type === 'UserMessagePosted')!;
      const data = posted.data as Json;
      expect(server.platform.secrets.open(data.end_user_token_sealed)).to.equal(token);
      expect(server.platform.secrets.open(data.end_user_session_sealed)).to.equal(session);
      const streamed = await server.request('POST', '/api/v1/chat/stream', { headers: as(member, { 'x-end-user-token': token, 'x-end-user-session': session }), body: { message: 'Refunds?' } });
      expect(streamed.status).to.equal(200);
      const stored = JSON.stringify(await server.platform.storedEvents.readAll({ maxCount: 100_000 }));
      expect(stored).to.not.contain(token);
      expect(stored).to.not.contain(session);
      expect(logLines.length).to.be.greaterThan(0);
      expect(logLines.join('\n')).to.not.contain(token);
      expect(logLines.join('\n')).to.not.contain(session);
    });

    it('honours Idempotency-Key: a retry gets the first answer and records nothing more', async () => {
      const body = { message: 'How long do refunds take?' };
      const first = await ask(member, body, { 'idempotency-key': 'chat-turn-1' });
      const again = await ask(member, body, { 'idempotency-key': 'chat-turn-1' });
      expect([again.status, again.headers.get('idempotent-replayed')]).to.deep.equal([200, 'true']);
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
      expect((await ask(member, { message: 'Another question' }, { 'idempotency-key': 'chat-turn-1' })).status).to.equal(422);
    });
  });

  describe('refusals', () => {
    it('is 401 without a user token, or with a widget token (both routes)', async () => {
      const widgetToken = await widgetTokenOf(server, owner);
      for (const path of ['/api/v1/chat', '/api/v1/chat/stream']) {
        const credentials: Array<Record<string, string>> = [{}, { authorization: 'Bearer nonsense' }, { authorization: `Bearer ${widgetToken}` }];
        for (const headers of credentials) {
          const response = await server.request('POST', path, { headers, body: { message: 'Refunds?' } });
          expect(response.status, `${path} ${JSON.stringify(headers)}`).to.equal(401);
          expect(response.headers.get('content-type')).to.match(/^application\/json/);
        }
      }
    });

    it('is 403 tenant_suspended for a suspended organization (both routes)', async () => {
      const suspended = await registerOwner(server, 'chat-suspended-org');
      const result = await suspendTenant(server.platform.commands, suspended.tenant_id, 'unpaid', systemContext('test'));
      await server.platform.readYourWrites(result.position);
      for (const path of ['/api/v1/chat', '/api/v1/chat/stream']) {
        const response = await server.request('POST', path, { headers: as(suspended), body: { message: 'Refunds?' } });
        expect([response.status, response.json.code], path).to.deep.equal([403, 'tenant_suspended']);
      }
    });

    it('is 400 naming each bad field, before anything is recorded (both routes, as JSON)', async () => {
      const cases: Array<[Json, Record<string, string>, string, string]> = [
        [{}, {}, 'message', 'invalid_request'],
        [{ message: 42 }, {}, 'message', 'invalid_request'],
        [{ message: '   ' }, {}, 'message', 'invalid_message'],
        [{ message: 'x'.repeat(8001) }, {}, 'message', 'invalid_message'],
        [{ message: 'a\u0000b' }, {}, 'message', 'invalid_message'],
        [{ message: 'Refunds?', conversation_id: 42 }, {}, 'conversation_id', 'invalid_request'],
        [{ message: 'Refunds?', conversation_id: '' }, {}, 'conversation_id', 'invalid_request'],
        [{ message: 'Refunds?', workspace_id: ['a'] }, {}, 'workspace_id', 'invalid_request'],
        [{ message: 'Refunds?' }, { 'x-end-user-token': 'x'.repeat(4097) }, 'X-End-User-Token', 'invalid_request'],
        [{ message: 'Refunds?' }, { 'x-end-user-session': 'y'.repeat(4097) }, 'X-End-User-Session', 'invalid_request'],
      ];
      for (const path of ['/api/v1/chat', '/api/v1/chat/stream']) {
        for (const [body, headers, field, code] of cases) {
          const response = await server.request('POST', path, { headers: as(member, headers), body });
          const where = `${path} ${JSON.stringify(body).slice(0, 60)} ${Object.keys(headers).join()}`;
          expect(response.status, where).to.equal(400);
          expect(response.json, where).to.deep.include({ code, field });
          expect(await response.events(), where).to.deep.equal([]);
        }
      }
    });

    it('is 404 for an unknown conversation on the streaming route too, as JSON', async () => {
      const response = await server.request('POST', '/api/v1/chat/stream', { headers: as(member), body: { message: 'Refunds?', conversation_id: 'nope' } });
      expect([response.status, response.json.code]).to.deep.equal([404, 'conversation_not_found']);
      expect(response.headers.get('content-type')).to.match(/^application\/json/);
    });

    it('counts each message against the monthly quota: past it 429 with the numbers, and nothing recorded', async () => {
      const limited = await registerOwner(server, 'chat-quota-org');
      await setQuotaOverrides(server.platform.identity, 'test-admin', limited.tenant_id, { overrides: { messages_per_month: 2 }, reason: 'test' }, systemContext('test'));
      const day = dayKey(new Date());
      const dailyBefore = (await server.platform.readStore.collection<DailyUsageDocument>(DAILY_USAGE).get(dailyUsageId('messages', day)))?.count ?? 0;
      const first = await server.request('POST', '/api/v1/chat', { headers: as(limited), body: { message: 'One?' } });
      const second = await server.request('POST', '/api/v1/chat/stream', { headers: as(limited), body: { message: 'Two?', conversation_id: first.json.conversation_id } });
      expect([first.status, second.status]).to.deep.equal([200, 200]);
      const quotas = await server.platform.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(limited.tenant_id);
      expect(quotas!.messages_by_month).to.deep.equal({ [monthKey(new Date())]: 2 });
      const daily = await server.platform.readStore.collection<DailyUsageDocument>(DAILY_USAGE).get(dailyUsageId('messages', day));
      expect(daily!.count - dailyBefore).to.equal(2);

      for (const path of ['/api/v1/chat', '/api/v1/chat/stream']) {
        const refused = await server.request('POST', path, { headers: as(limited), body: { message: 'Three?', conversation_id: first.json.conversation_id } });
        expect(refused.status, path).to.equal(429);
        expect(refused.headers.get('content-type')).to.match(/^application\/json/);
        const now = new Date();
        expect(refused.json, path).to.deep.equal({
          code: 'quota_exceeded',
          message: refused.json.message,
          quota: 'messages_per_month',
          limit: 2,
          used: 2,
          resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        });
        expect(await refused.events(), path).to.deep.equal([]);
      }
      expect(typesOf(await conversationEvents(server, first.json.conversation_id))).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered', 'UserMessagePosted', 'AssistantAnswered']);
    });
  });

  describe('with an OpenAI-compatible model server', () => {
    let llm: OpenAiCompatibleServer;
    let modelServer: TestServer;
    let asker: Account;
    let workspaceId: string;
    const documentId = `doc-llm-refunds-${randomUUID()}`;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

    const openStream = async (body: Json, signal?: AbortSignal): Promise<StreamReader> => {
      const response = await fetch(`${modelServer.url}/api/v1/chat/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${asker.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
      return new StreamReader(response);
    };
    const eventsOfRequest = async (requestId: string): Promise<DomainRecordedEvent[]> =>
      (await modelServer.platform.eventStore.readAll({ maxCount: 100_000 })).filter((event) => event.metadata.request_id === requestId);

    before(async () => {
      llm = await OpenAiCompatibleServer.start();
      modelServer = await startTestServer({ SCRYPT_LOG_N: '12', LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'scripted-model', LLM_API_KEY: 'sk-local-test', CHAT_HEARTBEAT_MS: '10' }, { searchIndex: index });
      asker = await registerOwner(modelServer, 'chat-llm-org');
      workspaceId = await defaultWorkspaceOf(modelServer, asker);
      const settings = await changeTenantSettings(modelServer.platform.commands, asker.tenant_id, { assistant_name: 'Ava', assistant_instructions: 'Answer in one sentence.', default_language: 'en' }, systemContext('test'));
      await modelServer.platform.readYourWrites(settings.position);
      await index.replaceDocument(
        asker.tenant_id,
        documentId,
        chunksOf({ tenant_id: asker.tenant_id, workspace_id: workspaceId, document_id: documentId, title: 'Refund policy' }, ['Refunds are issued within 14 days of the request.']),
      );
      process.on('unhandledRejection', onUnhandled);
    });
    after(async () => {
      process.off('unhandledRejection', onUnhandled);
      await modelServer.close();
      await llm.close();
    });

    it('streams the answer over SSE with its citations, and records the complete turn', async () => {
      llm.script({ deltas: ['Refunds take ', 'up to 14 days [1].'], usage: { prompt_tokens: 120, completion_tokens: 9 } });
      const response = await modelServer.request('POST', '/api/v1/chat/stream', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'How long do refunds take?' } });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
      const frames = framesOf(response.text).filter((frame) => frame.event);
      expect(frames.map((frame) => frame.event)).to.deep.equal(['delta', 'delta', 'citation', 'done']);
      expect(frames[0].data).to.deep.equal({ text: 'Refunds take ' });
      expect(frames[1].data).to.deep.equal({ text: 'up to 14 days [1].' });
      expect(frames[2].data).to.deep.equal({ passage_id: '1', document_id: documentId, chunk_id: `${documentId}:0`, title: 'Refund policy' });
      const done = frames[3].data;
      expect(done).to.deep.include({ paused: false, answered_from_knowledge: true, model: 'scripted-model' });

      const events = await conversationEvents(modelServer, done.conversation_id);
      expect(typesOf(events)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
      expect(events[1].data).to.deep.include({ message_id: done.user_message_id, text: 'How long do refunds take?' });
      const answered = events[2].data as Json;
      expect(answered).to.deep.include({
        message_id: done.message_id,
        reply_to: done.user_message_id,
        text: 'Refunds take up to 14 days [1].',
        citations: [frames[2].data],
        answered_from_knowledge: true,
        model: 'scripted-model',
        usage: { prompt_tokens: 120, completion_tokens: 9 },
      });
      expect(answered.latency_ms).to.be.a('number').and.at.least(0);
      expect(await response.events()).to.deep.equal(['ConversationStarted@conversation', 'UserMessagePosted@conversation', 'AssistantAnswered@conversation']);

      // The model was given the tenant's assistant and the numbered passage.
      const prompt = llm.requests[llm.requests.length - 1].body.messages[0].content;
      expect(prompt).to.contain('You are Ava');
      expect(prompt).to.contain('Answer in one sentence.');
      expect(prompt).to.contain('[1] Refund policy\nRefunds are issued within 14 days of the request.');
      expect(llm.requests[llm.requests.length - 1].headers.authorization).to.equal('Bearer sk-local-test');
    });

    it('answers POST /chat with the model and gives it the conversation so far', async () => {
      llm.script({ deltas: ['Within 14 days [1].'], usage: { prompt_tokens: 50, completion_tokens: 6 } }, { deltas: ['To the card you paid with [1].'] });
      const first = await modelServer.request('POST', '/api/v1/chat', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'How long do refunds take?' } });
      expect(first.status).to.equal(200);
      expect(first.json.answer).to.deep.include({ text: 'Within 14 days [1].', answered_from_knowledge: true, model: 'scripted-model' });
      expect(first.json.answer.citations).to.have.length(1);
      const second = await modelServer.request('POST', '/api/v1/chat', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'Refunded to what?', conversation_id: first.json.conversation_id } });
      expect(second.status).to.equal(200);
      const messages = llm.requests[llm.requests.length - 1].body.messages.slice(1);
      expect(messages).to.deep.equal([
        { role: 'user', content: 'How long do refunds take?' },
        { role: 'assistant', content: 'Within 14 days [1].' },
        { role: 'user', content: 'Refunded to what?' },
      ]);
    });

    it('records a failure of the model server: 502 assistant_unavailable on POST /chat, an error event on the stream', async () => {
      llm.script({ status: 500 }, { status: 503 });
      const failed = await modelServer.request('POST', '/api/v1/chat', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'How long do refunds take?' } });
      expect([failed.status, failed.json.code]).to.deep.equal([502, 'assistant_unavailable']);
      expect(await failed.events()).to.deep.equal(['ConversationStarted@conversation', 'UserMessagePosted@conversation', 'AssistantFailed@conversation']);
      const recorded = (await eventsOfRequest(failed.headers.get('x-request-id')!)).find((event) => event.type === 'AssistantFailed')!;
      expect(recorded.data).to.deep.include({ code: 'model_error' });

      const streamed = await modelServer.request('POST', '/api/v1/chat/stream', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'How long do refunds take?' } });
      expect(streamed.status).to.equal(200);
      const frames = framesOf(streamed.text).filter((frame) => frame.event);
      expect(frames.map((frame) => frame.event)).to.deep.equal(['error']);
      expect(frames[0].data).to.deep.include({ code: 'assistant_unavailable' });
      expect(await streamed.events()).to.deep.equal(['ConversationStarted@conversation', 'UserMessagePosted@conversation', 'AssistantFailed@conversation']);
    });

    it('finds what an earlier attempt of a turn recorded, by its Idempotency-Key seed: its answer, or after a failure a new attempt', async () => {
      const asking = operatorAsker(asker.tenant_id, 'seed-test');
      const context = { ...systemContext('seeded'), tenant_id: asker.tenant_id };
      llm.script({ status: 500 }, { deltas: ['Within 14 days [1].'] });
      try {
        await chat(modelServer.platform.chat, asking, { message: 'How long do refunds take?' }, context, { idempotencyKey: 'seed-a' });
        expect.fail('expected the first attempt to fail');
      } catch (error) {
        expect(error).to.be.instanceOf(AssistantUnavailableError);
      }
      // The client retries with the same key (a failed answer frees it): the question is asked again, as a new attempt.
      const retried = await chat(modelServer.platform.chat, asking, { message: 'How long do refunds take?' }, context, { idempotencyKey: 'seed-a' });
      // A retry after a crash that lost the answer finds the answer recorded, and records nothing.
      const requestsBefore = llm.requests.length;
      const again = await chat(modelServer.platform.chat, asking, { message: 'How long do refunds take?' }, context, { idempotencyKey: 'seed-a' });
      expect(again).to.deep.equal(retried);
      expect(llm.requests.length).to.equal(requestsBefore);
      const events = await conversationEvents(modelServer, retried.conversation_id);
      expect(typesOf(events)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantFailed', 'UserMessagePosted', 'AssistantAnswered']);
      expect((events[3].data as Json).message_id).to.equal(retried.user_message_id);
      expect((events[4].data as Json).message_id).to.equal(retried.answer!.message_id);
    });

    it('sends a keep-alive comment while the answer is awaited', async () => {
      let heartbeatSeen!: () => void;
      const seen = new Promise<void>((resolve) => (heartbeatSeen = resolve));
      llm.script({ deltas: ['Refunds ', 'take 14 days [1].'], hold: { index: 1, until: seen } });
      const stream = await openStream({ message: 'How long do refunds take?' });
      expect(stream.response.status).to.equal(200);
      expect(await stream.until((frame) => frame.event === 'delta')).to.not.equal(null);
      const heartbeat = await stream.until((frame) => frame.comment === 'keep-alive');
      expect(heartbeat).to.not.equal(null);
      heartbeatSeen();
      const done = await stream.until((frame) => frame.event === 'done');
      expect(done!.data).to.deep.include({ answered_from_knowledge: true });
    });

    it('ends cleanly when the client leaves mid-stream: the model is stopped and the conversation records client_gone', async () => {
      const abandonedBefore = llm.abandoned;
      llm.script({ deltas: ['Refunds ', 'never sent'], hold: { index: 1, until: new Promise(() => undefined) } });
      const controller = new AbortController();
      const stream = await openStream({ message: 'How long do refunds take?' }, controller.signal);
      const requestId = stream.response.headers.get('x-request-id')!;
      expect(await stream.until((frame) => frame.event === 'delta')).to.deep.include({ data: { text: 'Refunds ' } });
      controller.abort();
      await llm.abandonedAtLeast(abandonedBefore + 1);
      let events: DomainRecordedEvent[] = [];
      await eventually(async () => {
        events = await eventsOfRequest(requestId);
        return events.some((event) => event.type === 'AssistantFailed');
      }, 5000, 'the failure of the abandoned turn');
      expect(typesOf(events)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantFailed']);
      expect(events[2].data).to.deep.include({ code: 'client_gone' });
      // The server carries on.
      llm.script({ deltas: ['Still here [1].'] });
      const next = await modelServer.request('POST', '/api/v1/chat', { headers: { authorization: `Bearer ${asker.token}` }, body: { message: 'Refunds?' } });
      expect(next.status).to.equal(200);
      expect(unhandled).to.deep.equal([]);
    });
  });
});
