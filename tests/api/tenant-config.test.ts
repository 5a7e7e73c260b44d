// Tenant configuration and analytics over HTTP (spec 4.8): the handoff webhook and CRM
// connector configurations, the handoff deliveries list, feedback and analytics. Every route:
// success, 401, 403 for a member, 400 per bad field. The deployment allows neither plain http
// nor private addresses here (the defaults), so those are refused; public addresses are IP
// literals (no name resolution on the machines we build on). Secrets are never answered by a
// GET or a list, never logged, and never in an event in clear. Conversations are recorded
// through the conversation aggregate itself (tests/support/conversations.ts).

import { expect } from 'chai';
import { createLogger } from '../../infrastructure/logging/logger';
import { AUDIT_LOG } from '../../projections/audit-log';
import { expectEveryEventAudited } from '../support/audit';
import { type ConversationDriver, conversationsOf } from '../support/conversation-events';
import { type Account, joinAs, liftSeatLimit, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

const PUBLIC_HOOK = 'https://93.184.215.14/hooks/handoff';
const PUBLIC_CRM = 'https://93.184.215.15/crm/v3';

describe('tenant configuration and analytics (spec 4.8)', () => {
  let server: TestServer;
  let clock: ManualClock;
  /** Every line the platform logged. */
  const logged: string[] = [];
  /** Every secret and credential sent or answered: none may show up where it must not. */
  const secrets: string[] = [];
  let owner: Account;
  let admin: Account;
  let member: Account;
  /** An organization on the free plan: no handoff, no CRM. */
  let free: Account;
  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const get = (account: Account, path: string) => server.request('GET', path, { headers: as(account) });
  const post = (account: Account, path: string, body: unknown, extra: Record<string, string> = {}) => server.request('POST', path, { headers: as(account, extra), body });

  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    if (status !== 403) expect(await response.events()).to.deep.equal([]);
  }

  before(async () => {
    clock = new ManualClock(new Date('2026-11-20T08:00:00.000Z'));
    const logger = createLogger('debug', { write: (line: string) => void logged.push(line) });
    server = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600) }, { clock, logger });
    owner = await registerOwner(server, 'tenant-cfg-org');
    await liftSeatLimit(server, owner.tenant_id);
    await subscribeTo(server, owner.tenant_id, 'growth');
    admin = await joinAs(server, await registerOwner(server, 'tenant-cfg-adm-home', 'tenant-cfg-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'tenant-cfg-mem-home', 'tenant-cfg-mem@example.com'), owner.tenant_id, 'member');
    free = await registerOwner(server, 'tenant-cfg-free');
  });
  after(() => server.close());

  describe('who may call', () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/tenant/handoff'],
      ['POST', '/api/v1/tenant/handoff', { url: PUBLIC_HOOK }],
      ['GET', '/api/v1/tenant/handoff/deliveries'],
      ['GET', '/api/v1/tenant/crm'],
      ['POST', '/api/v1/tenant/crm', { kind: 'webhook', url: PUBLIC_CRM }],
      ['GET', '/api/v1/tenant/feedbacks'],
      ['GET', '/api/v1/tenant/analytics'],
    ];

    it('is 401 without a user token, for every route', async () => {
      for (const [method, path, body] of routes) {
        const response = await server.request(method, path, { body });
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([401, 'unauthenticated']);
        expect(await response.events()).to.deep.equal([]);
      }
    });

    it('is 403 for a member, recorded as an access denial, for every route', async () => {
      for (const [method, path, body] of routes) {
        const response = await server.request(method, path, { headers: as(member), body });
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([403, 'insufficient_role']);
        expect(await response.events(), `${method} ${path}`).to.deep.equal(['AccessDenied@accessDenial']);
      }
    });
  });

  describe('GET, POST /api/v1/tenant/handoff', () => {
    it('answers an organization without a handoff webhook as not configured', async () => {
      const response = await get(owner, '/api/v1/tenant/handoff');
      expect(response.status).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"-1"');
      expect(response.json).to.deep.equal({ configured: false, url: null, enabled: false, has_secret: false, secret_hint: null, secret_source: null, updated_at: null, updated_by: null });
    });

    it('is 403 feature_not_in_plan for an organization whose plan lacks handoff, recording nothing but the denial', async () => {
      const response = await post(free, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK });
      expect(response.status).to.equal(403);
      expect(response.json).to.include({ code: 'feature_not_in_plan', feature: 'handoff', plan: 'starter' });
      expect(await response.events()).to.deep.equal(['AccessDenied@accessDenial']);
    });

    it('refuses a bad body with 400 naming the field, and records nothing', async () => {
      const path = '/api/v1/tenant/handoff';
      await expectRefused(await post(admin, path, {}), 400, 'invalid_request', 'url');
      await expectRefused(await post(admin, path, { url: 42 }), 400, 'invalid_request', 'url');
      await expectRefused(await post(admin, path, { url: PUBLIC_HOOK, secret: 1234 }), 400, 'invalid_request', 'secret');
      await expectRefused(await post(admin, path, { url: PUBLIC_HOOK, enabled: 'yes' }), 400, 'invalid_request', 'enabled');
      await expectRefused(await post(admin, path, { url: 'desk.example.com/hook' }), 400, 'invalid_url', 'url');
      await expectRefused(await post(admin, path, { url: 'https://agent:hunter2@93.184.215.14/hook' }), 400, 'invalid_url', 'url');
      await expectRefused(await post(admin, path, { url: PUBLIC_HOOK, secret: 'too short' }), 400, 'invalid_secret', 'secret');
      await expectRefused(await post(admin, path, { url: PUBLIC_HOOK, secret: 'a secret with spaces in it' }), 400, 'invalid_secret', 'secret');
    });

    it('refuses http:// and private, loopback, link-local and metadata addresses (SSRF), naming url', async () => {
      const path = '/api/v1/tenant/handoff';
      await expectRefused(await post(admin, path, { url: 'http://93.184.215.14/hook' }), 400, 'insecure_url', 'url');
      for (const url of ['https://127.0.0.1/hook', 'https://10.0.0.8/hook', 'https://192.168.1.20/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/hook', 'https://[fd00:ec2::254]/', 'https://localhost/hook']) {
        await expectRefused(await post(admin, path, { url }), 400, 'private_address', 'url');
      }
      await expectRefused(await post(admin, path, { url: 'https://helpdesk.invalid/hook' }), 400, 'unresolvable_host', 'url');
    });

    let made: string;
    it('sets the webhook with a secret the platform makes, answered this once, sealed in its event', async () => {
      const response = await post(admin, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK });
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"0"');
      made = response.json.secret;
      secrets.push(made);
      expect(made).to.match(/^hsec_[A-Za-z0-9_-]{43}$/);
      expect(response.json).to.deep.equal({
        configured: true,
        url: PUBLIC_HOOK,
        enabled: true,
        has_secret: true,
        secret_hint: made.slice(-4),
        secret_source: 'generated',
        updated_at: clock.now().toISOString(),
        updated_by: { kind: 'user', id: admin.user_id },
        secret: made,
      });
      expect(await response.events()).to.deep.equal(['HandoffConfigured@handoffConfig']);
      const [event] = await server.platform.eventStore.readStream(`handoffConfig-${owner.tenant_id}`);
      expect(event.metadata).to.include({ tenant_id: owner.tenant_id });
      expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: admin.user_id });
      const data = event.data as { secret_sealed: string };
      expect(server.platform.secrets.open(data.secret_sealed)).to.equal(made);
    });

    it('never answers the secret again: GET shows that there is one and its last four characters', async () => {
      const response = await get(owner, '/api/v1/tenant/handoff');
      expect(response.status).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"0"');
      expect(response.json).to.include({ configured: true, url: PUBLIC_HOOK, enabled: true, has_secret: true, secret_hint: made.slice(-4), secret_source: 'generated' });
      expect(response.json).to.not.have.property('secret');
      expect(response.text).to.not.include(made);
    });

    it('keeps the secret when a change gives none; the same configuration again records nothing', async () => {
      const same = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK });
      expect(same.status).to.equal(200);
      expect(same.json).to.not.have.property('secret');
      expect(await same.events()).to.deep.equal([]);
      const off = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK, enabled: false });
      expect(off.json).to.include({ enabled: false, secret_hint: made.slice(-4), secret_source: 'generated' });
      expect(off.json).to.not.have.property('secret');
      expect(await off.events()).to.deep.equal(['HandoffConfigured@handoffConfig']);
      const moved = await post(owner, '/api/v1/tenant/handoff', { url: 'https://93.184.215.14/hooks/v2' });
      expect(moved.json).to.include({ url: 'https://93.184.215.14/hooks/v2', enabled: false });
    });

    it('takes a given secret (never answering it), and makes a new one for an empty secret (rotation)', async () => {
      const given = 'desk-shared-secret-0001';
      secrets.push(given);
      const set = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK, secret: given, enabled: true });
      expect(set.status).to.equal(200);
      expect(set.json).to.include({ secret_hint: '0001', secret_source: 'given', enabled: true });
      expect(set.json).to.not.have.property('secret');
      const rotated = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK, secret: '' });
      expect(rotated.json.secret).to.match(/^hsec_/);
      expect(rotated.json.secret).to.not.equal(made);
      expect(rotated.json).to.include({ secret_hint: rotated.json.secret.slice(-4), secret_source: 'generated' });
      secrets.push(rotated.json.secret);
    });

    it('honours If-Match: 412 for a version another write replaced, and the change for the current one', async () => {
      const current = await get(owner, '/api/v1/tenant/handoff');
      const stale = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK, enabled: false }, { 'if-match': '"0"' });
      await expectRefused(stale, 412, 'revision_mismatch');
      const fresh = await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK, enabled: false }, { 'if-match': current.headers.get('etag')! });
      expect(fresh.status).to.equal(200);
      expect(fresh.headers.get('etag')).to.equal(`"${Number(JSON.parse(current.headers.get('etag')!)) + 1}"`);
      await expectRefused(await post(owner, '/api/v1/tenant/handoff', { url: PUBLIC_HOOK }, { 'if-match': 'W/"1"' }), 412, 'revision_mismatch');
    });
  });

  describe('GET /api/v1/tenant/handoff/deliveries', () => {
    it('lists the handoffs sent (none yet), and refuses an unknown status or a bad limit naming it', async () => {
      const response = await get(admin, '/api/v1/tenant/handoff/deliveries?status=failed&limit=10');
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ items: [], next_cursor: null });
      await expectRefused(await get(admin, '/api/v1/tenant/handoff/deliveries?status=lost'), 400, 'invalid_request', 'status');
      await expectRefused(await get(admin, '/api/v1/tenant/handoff/deliveries?limit=0'), 400, 'invalid_limit', 'limit');
    });
  });

  describe('GET, POST /api/v1/tenant/crm', () => {
    const path = '/api/v1/tenant/crm';
    const credential = 'pat-na1-11111111-2222-3333-4444-555555555555';

    it('answers an organization without a CRM as not configured', async () => {
      const response = await get(admin, path);
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ configured: false, kind: null, url: null, enabled: false, has_credential: false, field_mapping: {}, updated_at: null, updated_by: null });
    });

    it('is 403 feature_not_in_plan when the plan lacks crm', async () => {
      const response = await post(free, path, { kind: 'hubspot', url: PUBLIC_CRM });
      expect(response.status).to.equal(403);
      expect(response.json).to.include({ code: 'feature_not_in_plan', feature: 'crm', plan: 'growth' });
    });

    it('refuses a bad body with 400 naming the field, and records nothing', async () => {
      await expectRefused(await post(admin, path, { url: PUBLIC_CRM }), 400, 'invalid_request', 'kind');
      await expectRefused(await post(admin, path, { kind: 'zoho', url: PUBLIC_CRM }), 400, 'invalid_request', 'kind');
      await expectRefused(await post(admin, path, { kind: 'hubspot' }), 400, 'invalid_request', 'url');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, credential: 42 }), 400, 'invalid_request', 'credential');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, credential: '' }), 400, 'invalid_credential', 'credential');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, credential: 'has a space' }), 400, 'invalid_credential', 'credential');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, field_mapping: ['email'] }), 400, 'invalid_request', 'field_mapping');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, field_mapping: { email: 5 } }), 400, 'invalid_request', 'field_mapping.email');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, field_mapping: { shoe_size: 'shoe' } }), 400, 'invalid_field_mapping', 'field_mapping.shoe_size');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, field_mapping: { email: 'Email', phone: 'Email' } }), 400, 'invalid_field_mapping', 'field_mapping.phone');
      await expectRefused(await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, enabled: 'no' }), 400, 'invalid_request', 'enabled');
      await expectRefused(await post(admin, path, { kind: 'webhook', url: 'http://93.184.215.15/leads' }), 400, 'insecure_url', 'url');
      await expectRefused(await post(admin, path, { kind: 'webhook', url: 'https://192.168.0.10/leads' }), 400, 'private_address', 'url');
      await expectRefused(await post(admin, path, { kind: 'webhook', url: 'https://169.254.169.254/' }), 400, 'private_address', 'url');
    });

    it('sets the connector with a sealed credential, answering only that there is one', async () => {
      secrets.push(credential);
      const response = await post(admin, path, { kind: 'hubspot', url: PUBLIC_CRM, credential, field_mapping: { email: 'email', first_name: 'firstname', company: 'company' } });
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"0"');
      expect(response.json).to.deep.equal({
        configured: true,
        kind: 'hubspot',
        url: PUBLIC_CRM,
        enabled: true,
        has_credential: true,
        field_mapping: { email: 'email', first_name: 'firstname', company: 'company' },
        updated_at: clock.now().toISOString(),
        updated_by: { kind: 'user', id: admin.user_id },
      });
      expect(await response.events()).to.deep.equal(['CrmConfigured@crmConfig']);
      const [event] = await server.platform.eventStore.readStream(`crmConfig-${owner.tenant_id}`);
      expect(server.platform.secrets.open((event.data as { credential_sealed: string }).credential_sealed)).to.equal(credential);
      const read = await get(owner, path);
      expect(read.json).to.deep.equal(response.json);
      expect(read.text).to.not.include(credential);
    });

    it('keeps the credential and the mapping when a change leaves them out, removes the credential for null, and honours If-Match', async () => {
      const same = await post(owner, path, { kind: 'hubspot', url: PUBLIC_CRM });
      expect(same.json).to.include({ has_credential: true });
      expect(same.json.field_mapping).to.deep.equal({ email: 'email', first_name: 'firstname', company: 'company' });
      expect(await same.events()).to.deep.equal([]);
      const removed = await post(owner, path, { kind: 'webhook', url: PUBLIC_CRM, credential: null }, { 'if-match': '"0"' });
      expect(removed.status).to.equal(200);
      expect(removed.json).to.include({ kind: 'webhook', has_credential: false });
      await expectRefused(await post(owner, path, { kind: 'hubspot', url: PUBLIC_CRM }, { 'if-match': '"0"' }), 412, 'revision_mismatch');
    });
  });

  describe('feedback and analytics', () => {
    /** An organization of its own, so that the counts are exactly this scenario's. */
    let analyst: Account;
    let talk: ConversationDriver;

    before(async () => {
      analyst = await registerOwner(server, 'tenant-cfg-analytics');
      talk = conversationsOf(server.platform, analyst.tenant_id, analyst.user_id);
      // Friday 2026-11-20, 09:xx UTC: one conversation, an answer from knowledge (rated up) and one without.
      clock.advance(60 * 60_000);
      const friday = await talk.start({ title: 'Returns' });
      const q1 = await talk.ask(friday, 'Can I return shoes?');
      const a1 = await talk.answer(friday, q1, { fromKnowledge: true });
      await talk.feedback(friday, a1, 'up', 'spot on');
      const q2 = await talk.ask(friday, 'And socks?');
      const a2 = await talk.answer(friday, q2, { fromKnowledge: false });
      // Sunday 2026-11-22, 10:xx UTC: a failure, an answer rated down, and a handoff.
      clock.advance(2 * 24 * 60 * 60_000 + 90 * 60_000);
      await talk.feedback(friday, a2, 'down', 'not helpful');
      const sunday = await talk.start({ title: 'Parcel', channel: 'widget' });
      const q3 = await talk.ask(sunday, 'Where is my parcel?');
      await talk.fail(sunday, q3);
      const q4 = await talk.ask(sunday, 'Hello?');
      await talk.answer(sunday, q4, { fromKnowledge: true });
      await talk.setStatus(sunday, 'handed_off');
      await talk.agentReply(sunday, 'Let me look that up for you.');
      // Another organization's conversation counts for it alone.
      const others = conversationsOf(server.platform, owner.tenant_id, owner.user_id);
      const elsewhere = await others.start();
      await others.ask(elsewhere, 'Not counted for the analyst');
    });

    it('lists feedback newest first, filtered by rating and time, in cursor pages', async () => {
      const all = await get(analyst, '/api/v1/tenant/feedbacks');
      expect(all.status).to.equal(200);
      expect(all.json.items.map((item: { rating: string; comment: string }) => [item.rating, item.comment])).to.deep.equal([
        ['down', 'not helpful'],
        ['up', 'spot on'],
      ]);
      const [down] = all.json.items;
      expect(Object.keys(down).sort()).to.deep.equal(['comment', 'conversation_id', 'given_at', 'given_by', 'id', 'message_id', 'rating']);
      expect(down.given_by).to.deep.equal({ kind: 'user', id: analyst.user_id });
      expect(down.given_at).to.equal('2026-11-22T10:30:00.000Z');
      expect((await get(analyst, '/api/v1/tenant/feedbacks?rating=up')).json.items.map((item: { comment: string }) => item.comment)).to.deep.equal(['spot on']);
      expect((await get(analyst, '/api/v1/tenant/feedbacks?from=2026-11-21')).json.items.map((item: { comment: string }) => item.comment)).to.deep.equal(['not helpful']);
      expect((await get(analyst, '/api/v1/tenant/feedbacks?to=2026-11-20')).json.items.map((item: { comment: string }) => item.comment)).to.deep.equal(['spot on']);
      expect((await get(analyst, '/api/v1/tenant/feedbacks?from=2026-11-22T10:30:00Z&to=2026-11-22T10:30:00Z')).json.items).to.have.length(1);
      const first = await get(analyst, '/api/v1/tenant/feedbacks?limit=1');
      expect(first.json.items).to.have.length(1);
      const second = await get(analyst, `/api/v1/tenant/feedbacks?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`);
      expect(second.json.items[0].comment).to.equal('spot on');
      expect((await get(owner, '/api/v1/tenant/feedbacks')).json.items).to.deep.equal([]);
    });

    it('refuses a bad feedback filter with 400 naming it', async () => {
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?rating=sideways'), 400, 'invalid_request', 'rating');
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?from=yesterday'), 400, 'invalid_request', 'from');
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?to=soon'), 400, 'invalid_request', 'to');
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?from=2026-11-22&to=2026-11-21'), 400, 'invalid_request', 'from');
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?rating=up&rating=down'), 400, 'invalid_request', 'rating');
      await expectRefused(await get(analyst, '/api/v1/tenant/feedbacks?cursor='), 400, 'invalid_cursor', 'cursor');
    });

    it('answers totals, rates, the busiest hours and every day of the range', async () => {
      const response = await get(analyst, '/api/v1/tenant/analytics?from=2026-11-20&to=2026-11-22');
      expect(response.status).to.equal(200);
      const counts = {
        conversations: 2,
        user_messages: 4,
        assistant_answers: 3,
        answered_from_knowledge: 2,
        no_answer: 1,
        failures: 1,
        agent_replies: 1,
        handoffs: 1,
        feedback_up: 1,
        feedback_down: 1,
      };
      expect(response.json.from).to.equal('2026-11-20');
      expect(response.json.to).to.equal('2026-11-22');
      expect(response.json.totals).to.deep.equal(counts);
      expect(response.json.rates).to.deep.equal({ answered_from_knowledge_rate: 0.6667, no_answer_rate: 0.3333, failure_rate: 0.25, feedback_ratio: 0.5 });
      expect(response.json.busiest_hours).to.have.length(24);
      expect(response.json.busiest_hours.filter((bucket: { user_messages: number }) => bucket.user_messages > 0)).to.deep.equal([
        { hour: 9, user_messages: 2 },
        { hour: 10, user_messages: 2 },
      ]);
      const zero = Object.fromEntries(Object.keys(counts).map((counter) => [counter, 0]));
      expect(response.json.days).to.deep.equal([
        { date: '2026-11-20', ...zero, conversations: 1, user_messages: 2, assistant_answers: 2, answered_from_knowledge: 1, no_answer: 1, feedback_up: 1 },
        { date: '2026-11-21', ...zero },
        { date: '2026-11-22', ...zero, conversations: 1, user_messages: 2, assistant_answers: 1, answered_from_knowledge: 1, failures: 1, agent_replies: 1, handoffs: 1, feedback_down: 1 },
      ]);
    });

    it('covers the last 30 days by default, and answers null rates for an organization without activity', async () => {
      const response = await get(analyst, '/api/v1/tenant/analytics');
      expect(response.json).to.include({ from: '2026-10-24', to: '2026-11-22' });
      expect(response.json.days).to.have.length(30);
      expect(response.json.totals.conversations).to.equal(2);
      const quiet = await get(free, '/api/v1/tenant/analytics');
      expect(quiet.json.rates).to.deep.equal({ answered_from_knowledge_rate: null, no_answer_rate: null, failure_rate: null, feedback_ratio: null });
      expect(quiet.json.totals.user_messages).to.equal(0);
    });

    it('refuses a range that is not calendar days, backwards, or longer than 366 days, naming the field', async () => {
      await expectRefused(await get(analyst, '/api/v1/tenant/analytics?from=2026-02-30'), 400, 'invalid_request', 'from');
      await expectRefused(await get(analyst, '/api/v1/tenant/analytics?to=tomorrow'), 400, 'invalid_request', 'to');
      await expectRefused(await get(analyst, '/api/v1/tenant/analytics?from=2026-11-22&to=2026-11-01'), 400, 'invalid_request', 'from');
      await expectRefused(await get(analyst, '/api/v1/tenant/analytics?from=2025-01-01&to=2026-01-02'), 400, 'invalid_request', 'from');
      await expectRefused(await get(analyst, '/api/v1/tenant/analytics?to=2026-11-01&to=2026-11-02'), 400, 'invalid_request', 'to');
      expect((await get(analyst, '/api/v1/tenant/analytics?from=2025-01-01&to=2026-01-01')).json.days).to.have.length(366);
    });
  });

  describe('the audit log, after everything above', () => {
    it('has every event recorded, the configurations and conversations among them, with its actor', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['HandoffConfigured', 'CrmConfigured', 'FeedbackGiven', 'ConversationStatusChanged']);
    });
  });

  describe('secrets', () => {
    it('are never in an answer, a log line, a stored event, or the audit log, in clear', async () => {
      expect(secrets.length).to.be.greaterThan(3);
      const answers = [await get(owner, '/api/v1/tenant/handoff'), await get(owner, '/api/v1/tenant/crm'), await get(owner, '/api/v1/tenant/handoff/deliveries')].map((response) => response.text);
      const events = JSON.stringify(await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 }));
      const audit = JSON.stringify((await server.platform.readStore.collection(AUDIT_LOG).find({ where: { tenant_id: owner.tenant_id }, limit: 1000 })).items);
      expect(logged.length).to.be.greaterThan(10);
      for (const secret of secrets) {
        for (const [where, text] of [
          ['answers', answers.join('\n')],
          ['logs', logged.join('')],
          ['events', events],
          ['audit log', audit],
        ] as const) {
          expect(text.includes(secret), `${secret.slice(0, 6)}... in the ${where}`).to.equal(false);
        }
      }
    });
  });
});
