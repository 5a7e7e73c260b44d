// The weekly knowledge-gap email (saga knowledge_gap_emails) on a running platform whose clock
// is moved by hand: the week's questions answered without the knowledge base, counted as asked
// alike, emailed to the owner and admins who want them once the week is over; a week whose
// conversations were deleted emails nobody; answers from the knowledge base open nothing. The
// due passes are run by hand (the background ones an hour apart).

import { expect } from 'chai';
import { KNOWLEDGE_GAP_EMAILS, KNOWLEDGE_GAP_GRACE_MS } from '../../application/conversation/knowledge-gap-emails';
import { knowledgeGapDigestStream, weekBounds, weekOf } from '../../domain/knowledge-gap-digest/knowledge-gap-digest';
import { type ConversationDriver, conversationsOf } from '../support/conversation-events';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';

describe('weekly knowledge-gap emails (saga knowledge_gap_emails)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let owner: Account;
  let admin: Account;
  let talk: ConversationDriver;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  /** A conversation with one question, answered with or without the knowledge base; its id. */
  async function asked(question: string, fromKnowledge = false): Promise<string> {
    const conversationId = await talk.start({ title: question, channel: 'widget' });
    await talk.answer(conversationId, await talk.ask(conversationId, question), { fromKnowledge });
    return conversationId;
  }

  /** The knowledge-gap emails queued since `since`, after a due pass once the saga has handled everything. */
  async function emailsAfterDuePass(since: number): Promise<Array<{ to: string; subject: string; text: string }>> {
    const [last] = await server.platform.eventStore.readAll({ direction: 'backwards', maxCount: 1, filter: { kind: 'event_type', types: ['AssistantAnswered'] } });
    await eventually(async () => ((await server.platform.readStore.getProjectionState(`saga:${KNOWLEDGE_GAP_EMAILS}-v1`))?.checkpoint ?? 0) >= last.position, 10_000, 'the saga past the answers');
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    await server.platform.sagas.runDue();
    const queued = await server.platform.eventStore.readAll({ fromPosition: since, filter: { kind: 'event_type', types: ['EmailQueued'] } });
    return queued.flatMap((event) => (event.type === 'EmailQueued' && event.data.kind === 'knowledge_gaps' ? [{ to: event.data.to, subject: event.data.subject, text: server.platform.secrets.open(event.data.body_sealed) }] : []));
  }
  /** To the first instant of the next week (Monday 00:00 UTC). */
  const nextWeek = (): void => clock.advance(Date.parse(weekBounds(weekOf(clock.now().toISOString())).end) - clock.now().getTime());

  before(async () => {
    // Wednesday 2026-11-25, 10:00 UTC.
    clock = new ManualClock(new Date('2026-11-25T10:00:00.000Z'));
    // Tokens outlive the weeks the clock is moved on.
    server = await startTestServer({ SCRYPT_LOG_N: '12', PUBLIC_URL: 'https://svc.example.test', TOKEN_TTL_SECONDS: String(30 * 24 * 3600) }, { clock, sagaRetryPollMs: 3_600_000 });
    owner = await registerOwner(server, 'gaps-org');
    admin = await joinAs(server, await registerOwner(server, 'gaps-adm'), owner.tenant_id, 'admin');
    await joinAs(server, await registerOwner(server, 'gaps-mem'), owner.tenant_id, 'member');
    talk = conversationsOf(server.platform, owner.tenant_id, owner.user_id);
  });
  after(() => server.close());

  it('emails the owner and admins the week’s unanswered questions once the week is over, counted as asked alike', async () => {
    const since = await server.platform.eventStore.headPosition();
    const week = weekOf(clock.now().toISOString());
    await asked('Do you sell gift cards?');
    clock.advance(3_600_000);
    await asked('do you sell GIFT cards');
    await asked('Can I pay with bitcoin?');
    await asked('When do you open?', true);
    // The week is not over: nothing yet.
    expect(await emailsAfterDuePass(since)).to.deep.equal([]);
    nextWeek();
    expect(await emailsAfterDuePass(since)).to.deep.equal([]);
    clock.advance(KNOWLEDGE_GAP_GRACE_MS);
    const emails = await emailsAfterDuePass(since);
    expect(emails.map((email) => email.to).sort()).to.deep.equal([owner.email, admin.email].sort());
    const [email] = emails;
    expect(email.subject).to.equal('[Org gaps-org] 3 questions your assistant could not answer from the knowledge base (2026-11-23 to 2026-11-29)');
    expect(email.text).to.contain('From 2026-11-23 to 2026-11-29 (UTC), the assistant of Org gaps-org found nothing in the knowledge base for 3 questions. The most asked:\n\n- "do you sell GIFT cards" (asked 2 times)\n- "Can I pay with bitcoin?"\n\n');
    expect(email.text).to.contain('GET /api/v1/tenant/unanswered-questions/summary?from=2026-11-23&to=2026-11-29');
    expect(email.text).to.match(/Turn them off for yourself: https:\/\/svc\.example\.test\/notifications\/unsubscribe\?token=\S+ \(or PATCH \/api\/v1\/me\/notifications \{"knowledge_gaps": false\}\)\./);
    const digest = await server.platform.eventStore.readStream(knowledgeGapDigestStream(owner.tenant_id, week));
    expect(digest.map((event) => event.type)).to.deep.equal(['KnowledgeGapDigestOpened', 'KnowledgeGapDigestClosed']);
    expect(digest[1].data).to.deep.include({ questions: 3, recipients: 2 });
    // Another pass sends nothing more.
    expect(await emailsAfterDuePass(await server.platform.eventStore.headPosition())).to.deep.equal([]);
  });

  it('emails nobody for a week whose questions are gone, nor a person who turned it off; answers from the knowledge base open no week', async () => {
    const mine = await server.request('PATCH', '/api/v1/me/notifications', { headers: as(admin), body: { knowledge_gaps: false } });
    expect([mine.status, mine.json.knowledge_gaps], mine.text).to.deep.equal([200, false]);
    // A week of one question whose conversation is deleted: nothing to tell.
    let since = await server.platform.eventStore.headPosition();
    let week = weekOf(clock.now().toISOString());
    const gone = await asked('Is the shop dog friendly?');
    expect((await server.request('DELETE', `/api/v1/conversations/${gone}`, { headers: as(owner) })).status).to.equal(204);
    nextWeek();
    clock.advance(KNOWLEDGE_GAP_GRACE_MS);
    expect(await emailsAfterDuePass(since)).to.deep.equal([]);
    const closing = (await server.platform.eventStore.readStream(knowledgeGapDigestStream(owner.tenant_id, week))).at(-1)!;
    expect(closing.type).to.equal('KnowledgeGapDigestClosed');
    expect(closing.data).to.deep.include({ questions: 0, recipients: 0 });

    // A week of answers from the knowledge base only: no digest at all.
    week = weekOf(clock.now().toISOString());
    await asked('When do you close?', true);
    expect(await server.platform.eventStore.readStream(knowledgeGapDigestStream(owner.tenant_id, week))).to.deep.equal([]);
    // A week with one: the owner alone is told, the admin turned it off.
    await asked('Do you deliver on Sundays?');
    since = await server.platform.eventStore.headPosition();
    nextWeek();
    clock.advance(KNOWLEDGE_GAP_GRACE_MS);
    const emails = await emailsAfterDuePass(since);
    expect(emails.map((email) => email.to)).to.deep.equal([owner.email]);
    expect(emails[0].subject).to.contain('1 question your assistant could not answer');
  });
});
