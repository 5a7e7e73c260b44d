// Idempotency-Key on creating routes, over HTTP against the real server: a retry with the same
// key and request gets the first answer and creates nothing; another request with the key is
// 422; concurrent duplicates create one resource; a crashed request is taken over after its
// hold and finishes what it started; the answer survives a restart.

import { expect } from 'chai';
import { startIdempotentRequest } from '../../application/idempotency-key/idempotent-requests';
import { createTeam } from '../../application/team/teams';
import { honoursIdempotencyKey } from '../../adapters/http/middleware/idempotency';
import { userContext } from '../support/context';
import { startConversation } from '../support/conversations';
import { type FormPart, multipartForm } from '../support/documents';
import { openApiFixture } from '../support/openapi-documents';
import { temporaryDirectory } from '../support/files';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner, liftSeatLimit, widgetTokenOf } from '../support/identity';
import { TestPaymentProvider } from '../support/payment-provider';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';
import { createToolAs, liftToolLimit, recordIntegration } from '../support/tools';
import { subscribeTo } from '../support/subscriptions';

const SUPER_ADMIN = { SUPER_ADMIN_EMAIL: 'root@idempotency.test', SUPER_ADMIN_PASSWORD: 'root password 123' };

describe('Idempotency-Key on creating routes', () => {
  let server: TestServer;
  let clock: ManualClock;
  let owner: Account;
  let admin: Account;
  let superAdminToken: string;

  const as = (account: Account, key?: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${account.token}`,
    ...(key === undefined ? {} : { 'idempotency-key': key }),
    ...extra,
  });
  const postTeam = (account: Account, key: string | undefined, body: unknown) => server.request('POST', '/api/v1/org/teams', { headers: as(account, key), body });

  /** Every recorded event of these types whose data matches `where`. */
  async function recorded(types: string[], where: (data: Record<string, unknown>) => boolean): Promise<Array<{ stream: string; id: string }>> {
    const events = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types }, maxCount: 100_000 });
    return events.filter((event) => where(event.data as Record<string, unknown>)).map((event) => ({ stream: event.stream, id: event.id }));
  }
  const teamsCreatedNamed = (name: string) => recorded(['TeamCreated'], (data) => data.name === name);

  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), ...SUPER_ADMIN }, { clock, paymentProvider: new TestPaymentProvider(clock) });
    superAdminToken = (await server.request('POST', '/api/v1/admin/auth/login', { body: { email: SUPER_ADMIN.SUPER_ADMIN_EMAIL, password: SUPER_ADMIN.SUPER_ADMIN_PASSWORD } })).json.token;
    owner = await registerOwner(server, 'idem-org');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwner(server, 'idem-adm-home', 'idem-adm@example.com'), owner.tenant_id, 'admin');
  });
  after(() => server.close());

  describe('POST /api/v1/org/teams', () => {
    it('answers a retry with the first answer, marked replayed, and appends nothing', async () => {
      const first = await postTeam(owner, 'team-key-1', { name: 'Replayed', description: 'once' });
      expect(first.status).to.equal(201);
      expect(first.headers.get('idempotent-replayed')).to.equal(null);
      expect(await first.events()).to.deep.equal([
        'IdempotencyKeyClaimed@idempotencyKey',
        'ReservationClaimed@reservation',
        'TeamCreated@team',
        'IdempotentAnswerRecorded@idempotencyKey',
      ]);

      const again = await postTeam(owner, 'team-key-1', { description: 'once', name: 'Replayed' });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect(again.headers.get('location')).to.equal(`/api/v1/org/teams/${first.json.id}`);
      expect(again.headers.get('etag')).to.equal(first.headers.get('etag'));
      expect(await again.events()).to.deep.equal([]);
      expect(await server.platform.eventStore.readStream(`team-${first.json.id}`)).to.have.length(1);
      expect(await teamsCreatedNamed('Replayed')).to.have.length(1);
    });

    it('refuses the same key with another body (422) and creates nothing', async () => {
      await postTeam(owner, 'team-key-2', { name: 'Original' });
      const other = await postTeam(owner, 'team-key-2', { name: 'Impostor' });
      expect(other.status).to.equal(422);
      expect(other.json).to.deep.equal({
        code: 'idempotency_key_reused',
        message: 'this Idempotency-Key was sent with another request; use a new key for a new request',
        field: 'Idempotency-Key',
      });
      expect(await other.events()).to.deep.equal([]);
      expect(await teamsCreatedNamed('Impostor')).to.deep.equal([]);
    });

    it('creates one team for concurrent duplicates; the others are 409 in use or replays', async () => {
      const responses = await Promise.all(Array.from({ length: 6 }, () => postTeam(owner, 'team-key-race', { name: 'Raced' })));
      const created = responses.filter((response) => response.status === 201);
      expect(created.length).to.be.greaterThan(0);
      expect(new Set(created.map((response) => response.json.id)).size).to.equal(1);
      for (const response of responses.filter((r) => r.status !== 201)) {
        expect(response.status).to.equal(409);
        expect(response.json.code).to.equal('idempotency_key_in_use');
        expect(response.headers.get('retry-after')).to.equal('1');
      }
      expect(await teamsCreatedNamed('Raced')).to.have.length(1);
      const later = await postTeam(owner, 'team-key-race', { name: 'Raced' });
      expect(later.status).to.equal(201);
      expect(later.json.id).to.equal(created[0].json.id);
    });

    it('refuses a malformed key with 400 naming the header, before anything runs', async () => {
      for (const key of ['', 'k'.repeat(256), 'caf\u00e9']) {
        const response = await postTeam(owner, key, { name: `Malformed ${key.length}` });
        expect(response.status, JSON.stringify(key)).to.equal(400);
        expect(response.json).to.include({ code: 'invalid_request', field: 'Idempotency-Key' });
        expect(await response.events()).to.deep.equal([]);
      }
      const longest = await postTeam(owner, `${'k'.repeat(253)} ~`, { name: 'Longest key' });
      expect(longest.status).to.equal(201);
    });

    it('keeps no answer that was not 2xx: the key is free for the corrected request', async () => {
      const bad = await postTeam(owner, 'team-key-3', { name: '' });
      expect(bad.status).to.equal(400);
      const taken = await postTeam(owner, 'team-key-3', { name: 'Replayed' });
      expect(taken.status).to.equal(409);
      expect(taken.json.code).to.equal('team_name_taken');
      const fixed = await postTeam(owner, 'team-key-3', { name: 'Corrected' });
      expect(fixed.status).to.equal(201);
      expect(fixed.headers.get('idempotent-replayed')).to.equal(null);
    });

    it('scopes a key to its caller: another admin with the same key makes their own request', async () => {
      const mine = await postTeam(owner, 'shared-key', { name: 'Owner team' });
      const theirs = await postTeam(admin, 'shared-key', { name: 'Admin team' });
      expect([mine.status, theirs.status]).to.deep.equal([201, 201]);
      expect(theirs.json.id).to.not.equal(mine.json.id);
      expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
    });

    it('binds a key for IDEMPOTENCY_KEY_TTL_SECONDS: after that the same key is a new request', async () => {
      const first = await postTeam(owner, 'team-key-ttl', { name: 'Short lived' });
      clock.advance(24 * 3600 * 1000 - 1000);
      expect((await postTeam(owner, 'team-key-ttl', { name: 'Short lived' })).headers.get('idempotent-replayed')).to.equal('true');
      clock.advance(2000);
      const expired = await postTeam(owner, 'team-key-ttl', { name: 'Short lived' });
      expect(expired.status).to.equal(409);
      expect(expired.json.code).to.equal('team_name_taken');
      const renamed = await postTeam(owner, 'team-key-ttl', { name: 'Next life' });
      expect(renamed.status).to.equal(201);
      expect(renamed.json.id).to.not.equal(first.json.id);
    });

    it('takes over a request that crashed after creating the team, once its hold lapsed, and finds that team', async () => {
      // The first request claimed the key and created its team, then the process died before answering.
      const body = { name: 'Survivor' };
      const principal = { kind: 'user' as const, user_id: owner.user_id, tenant_id: owner.tenant_id, role: 'owner' as const, jti: 'crashed' };
      const start = await startIdempotentRequest(
        server.platform.identity,
        { scope: [owner.tenant_id, owner.user_id, 'POST', '/api/v1/org/teams'], key: 'team-key-crash', request: { path: '/api/v1/org/teams', query: '', body } },
        userContext({ tenant_id: owner.tenant_id }),
      );
      if (start.kind !== 'run') throw new Error('expected to run');
      const made = await createTeam(server.platform.identity, principal, body, userContext({ tenant_id: owner.tenant_id }), { idempotencyKey: start.seed });

      const held = await postTeam(owner, 'team-key-crash', body);
      expect(held.status).to.equal(409);
      expect(held.json.code).to.equal('idempotency_key_in_use');

      clock.advance(31_000);
      const retried = await postTeam(owner, 'team-key-crash', body);
      expect(retried.status).to.equal(201);
      expect(retried.json.id).to.equal(made.value.id);
      expect(await retried.events()).to.deep.equal(['IdempotencyKeyClaimed@idempotencyKey', 'IdempotentAnswerRecorded@idempotencyKey']);
      expect(await teamsCreatedNamed('Survivor')).to.have.length(1);
    });
  });

  describe('POST /api/v1/team/invite', () => {
    const invite = (key: string, body: unknown) => server.request('POST', '/api/v1/team/invite', { headers: as(owner, key), body });

    it('sends one invitation and one email for a retried request, and answers it again', async () => {
      const first = await invite('invite-key-1', { email: 'invitee-once@example.com', role: 'member' });
      expect(first.status).to.equal(201);
      expect(first.headers.get('etag')).to.equal('"0"');
      const again = await invite('invite-key-1', { email: 'invitee-once@example.com', role: 'member' });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect(again.headers.get('etag')).to.equal('"0"');
      expect(await recorded(['InvitationSent'], (data) => data.email === 'invitee-once@example.com')).to.have.length(1);
      expect(await recorded(['EmailQueued'], (data) => data.to === 'invitee-once@example.com')).to.have.length(1);

      const other = await invite('invite-key-1', { email: 'invitee-once@example.com', role: 'admin' });
      expect(other.status).to.equal(422);
      expect(other.json.code).to.equal('idempotency_key_reused');
    });
  });

  describe('every creating route', () => {
    // POST routes that act on something rather than create it; a new POST route must be added
    // here or honour Idempotency-Key (and get a sample below).
    const ACTIONS: Record<string, string> = {
      'POST /graphql': 'GraphQL mutations are not REST resources',
      'POST /api/v1/admin/auth/login': 'opens a session',
      'POST /api/v1/org/transfer-ownership': 'moves ownership; repeating it changes nothing',
      'POST /api/v1/me/close': 'closes the account; a repeat is refused (its token is revoked) and changes nothing',
      'POST /api/v1/team/invitations/:id/revoke': 'an action on an invitation (If-Match guards it)',
      'POST /api/v1/team/accept-invite': 'a public action; the emailed token makes it once-only',
      'POST /api/v1/team/switch-tenant': 'opens a session',
      'POST /api/v1/admin/plans': 'its unique code makes it once-only: a retry is 409 plan_code_taken',
      'POST /api/v1/admin/tenants/:id/suspend': 'a change of state; repeating it is 409',
      'POST /api/v1/admin/tenants/:id/unsuspend': 'a change of state; repeating it is 409',
      'POST /api/v1/admin/tenants/:id/impersonate': 'opens a session',
      'POST /billing/sandbox/checkout/:id': "the sandbox provider's payment form: a checkout is paid at most once",
      'POST /notifications/unsubscribe': 'turns one preference off; a repeat changes nothing',
      'POST /api/v1/billing/subscription': 'cancels the subscription; repeating it changes nothing',
      'POST /api/v1/billing/cancel': 'cancels the subscription; repeating it changes nothing',
      'POST /api/v1/billing/webhook': "the payment provider's; its events are deduplicated by their ids",
      'POST /api/v1/whatsapp/webhook': "Meta's; each message is recorded once by its id, however often it is delivered",
      'POST /api/v1/chat/stream': 'a stream cannot be given again; POST /api/v1/chat is the retry-safe turn',
      'POST /api/v1/conversations/:id/messages/:message_id/feedback': 'once per answer: a retry is 409 feedback_given',
      'POST /api/v1/conversations/:id/erase': 'erasing again answers the first erasure and records nothing',
      'POST /api/v1/tenant/leads/:id/erase': 'erasing again answers the first erasure and records nothing',
      'POST /api/v1/tenant/handoff': 'sets the configuration (an upsert): the same request again records nothing; a secret the platform made is answered once, and a lost answer is mended by rotating it (an empty secret)',
      'POST /api/v1/tenant/crm': 'sets the configuration (an upsert): the same request again records nothing',
      'POST /api/v1/tenant/widget': 'changes the widget settings given (an upsert): the same request again records nothing',
      'POST /api/v1/tenant/widget/identity-secret': 'makes a new identity secret each time, answered once; a lost answer is mended by rotating again (the previous secret stops at once)',
      'POST /api/v1/widget/identity/clear': 'forgets the end-user identity of a conversation: the same request again records nothing',
      'POST /api/v1/documents/:id/reindex': 'queues the next indexing generation of a document (If-Match guards a repeat)',
      'POST /connector-manager/v1/invoke': "creates nothing: it calls a connector; a tool call's retry safety is its request_id",
      'POST /api/v1/tool-calls/:id/approve': 'a change of state of a tool call; repeating it is 409',
      'POST /api/v1/tool-calls/:id/refuse': 'a change of state of a tool call; repeating it is 409',
      'POST /api/v1/tool-calls/:id/erase': 'erasing again answers the first erasure and records nothing',
      'POST /api/v1/team/invitations/:id/erase': 'erasing again answers the first erasure and records nothing',
      'POST /api/v1/org/events/payloads/erase': 'erasing again erases nothing more and records nothing (each day is erased once)',
      'POST /api/v1/tenant/end-users/erase': 'erasing again erases nothing more and names what was erased',
      'POST /api/v1/workspaces/:workspace_id/integrations/import/preview': 'reads a document and writes nothing',
      'POST /api/v1/workspaces/:workspace_id/integrations/import/preview/upload': 'reads a document and writes nothing',
      'POST /api/v1/integrations/:id/reimport': "applies a document's difference: the same request again finds it applied",
      'POST /api/v1/org/sdk-connections/:id/test': 'a signed ping whose outcome is recorded each time: a repeat is another test',
      'POST /api/v1/org/sdk-connections/:id/sync-tools': 'records what the connector advertises now; a repeat registers no tool twice (one per connection, workspace and connector tool)',
      'POST /api/v1/org/events/:id/retry': 'a change of state of an orchestration event; repeating it is 409 (If-Match guards it)',
      'POST /api/v1/org/events/redrive': 're-queues what is dead or failed at the time: a repeat re-queues nothing already queued',
      'POST /api/v1/widget/messages/:id/feedback': 'once per answer: a retry is 409 feedback_given',
      'POST /api/v1/widget/conversations/:id/handoff': 'a change of state of the conversation; repeating it is 409 already_handed_off',
      'POST /api/v1/widget/conversations/:id/erase': 'erasing again answers the first erasure and records nothing',
      'POST /api/v1/widget/stt': 'creates nothing: it transcribes the audio sent',
      'POST /api/v1/widget/tts': 'creates nothing: it speaks the text sent',
    };
    /** Checkouts the confirm sample confirms. */
    const checkouts: string[] = [];
    /** The conversation the agent-reply sample replies in. */
    let conversationId = '';
    let workspaceId = '';
    /** The integration the sampled tools call. */
    let integrationId = '';
    /** The tool the test sample runs: its API is at an address this deployment refuses, so each run fails at the guard and nothing leaves the machine. */
    let toolId = '';
    /** The orchestration event the replay sample replays. */
    let orchestrationEventId = '';
    /** The organization's widget token, for the widget's samples. */
    let widgetToken = '';
    before(async () => {
      widgetToken = await widgetTokenOf(server, owner);
      orchestrationEventId = (await server.request('POST', '/api/v1/org/events', { headers: as(owner), body: { name: 'sampled.order.created' } })).json.id;
      // The samples create more tools (by hand and by import) than the free plan allows.
      await liftToolLimit(server, owner.tenant_id);
      conversationId = await startConversation(server, owner, { title: 'Sampled replies' });
      workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
      const integration = { name: 'Sampled tools API', base_url: 'https://93.184.215.16/api', auth: { kind: 'none' } };
      integrationId = (await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: as(owner), body: integration })).json.id;
      const refusedIntegration = await recordIntegration(server, owner.tenant_id, workspaceId, { name: 'Sampled API', base_url: 'http://127.0.0.1:9', auth: { kind: 'none' } });
      toolId = await createToolAs(server, owner, workspaceId, {
        integration_id: refusedIntegration,
        name: 'sampled_tool',
        method: 'GET',
        path: '/things/{id}',
        parameters: [{ argument: 'id', in: 'path', name: 'id' }],
        input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      });
      // SDK connections need the plan that has them.
      await subscribeTo(server, owner.tenant_id, 'premium');
      for (const plan_code of ['starter', 'growth']) {
        checkouts.push((await server.request('POST', '/api/v1/billing/checkout', { headers: as(owner), body: { plan_code, interval: 'month' } })).json.id);
      }
    });
    /** A valid request of each creating route, and another one for the same route; `admin` ones are sent with the super admin's token. */
    const SAMPLES: Record<string, (n: number) => { path: string; body: unknown; other: unknown; admin?: boolean; widget?: boolean; status?: number; multipart?: boolean }> = {
      'POST /api/v1/org/teams': (n) => ({ path: '/api/v1/org/teams', body: { name: `Sampled ${n}` }, other: { name: `Other ${n}` } }),
      'POST /api/v1/team/invite': (n) => ({
        path: '/api/v1/team/invite',
        body: { email: `sampled-${n}@example.com`, role: 'member' },
        other: { email: `other-${n}@example.com`, role: 'member' },
      }),
      'POST /api/v1/admin/tenants': (n) => ({
        path: '/api/v1/admin/tenants',
        admin: true,
        body: { name: `Sampled ${n}`, slug: `sampled-${n}`, owner_email: `sampled-owner-${n}@example.com` },
        other: { name: `Other ${n}`, slug: `other-${n}`, owner_email: `other-owner-${n}@example.com` },
      }),
      'POST /api/v1/billing/checkout': () => ({ path: '/api/v1/billing/checkout', body: { plan_code: 'starter', interval: 'month' }, other: { plan_code: 'growth', interval: 'month' } }),
      // Confirming acts on a checkout (200), and gives the same answer to a retry with its key.
      'POST /api/v1/billing/confirm': () => ({ path: '/api/v1/billing/confirm', body: { checkout_id: checkouts[0] }, other: { checkout_id: checkouts[1] }, status: 200 }),
      // A chat turn answers 200 (the answer, not a created resource), and the same answer to a retry with its key.
      'POST /api/v1/chat': (n) => ({ path: '/api/v1/chat', body: { message: `Sampled question ${n}` }, other: { message: `Other question ${n}` }, status: 200 }),
      // A visitor's turn: the keys are the visitor's own (sent with the widget token).
      'POST /api/v1/widget/chat': (n) => ({ path: '/api/v1/widget/chat', widget: true, body: { message: `Sampled question ${n}` }, other: { message: `Other question ${n}` }, status: 200 }),
      // A human agent's reply: a retry must not send it twice.
      'POST /api/v1/conversations/:id/messages': (n) => ({ path: `/api/v1/conversations/${conversationId}/messages`, body: { text: `Sampled ${n}` }, other: { text: `Other ${n}` } }),
      // An upload is compared by its fields and its file's name and digest.
      'POST /api/v1/documents': (n) => ({
        path: '/api/v1/documents',
        multipart: true,
        body: [{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename: `sampled-${n}.txt`, content: Buffer.from(`sampled ${n}`) }],
        other: [{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename: `sampled-${n}.txt`, content: Buffer.from(`other ${n}`) }],
      }),
      'POST /api/v1/documents/text': (n) => ({
        path: '/api/v1/documents/text',
        body: { workspace_id: workspaceId, title: `Sampled ${n}`, text: 'sampled' },
        other: { workspace_id: workspaceId, title: `Other ${n}`, text: 'other' },
      }),
      // A test runs the tool once (200 with its outcome): a retry gets that answer, not a second call.
      'POST /api/v1/tools/:id/test': (n) => ({ path: `/api/v1/tools/${toolId}/test`, body: { arguments: { id: `sampled-${n}` } }, other: { arguments: { id: `other-${n}` } }, status: 200 }),
      // An import makes an integration and its tools; one operation each, within the plan's business tools.
      'POST /api/v1/workspaces/:workspace_id/integrations/import/apply': (n) => ({
        path: `/api/v1/workspaces/${workspaceId}/integrations/import/apply`,
        body: { source: { document: openApiFixture('petstore.json').toString() }, integration: { name: `Sampled ${n}`, base_url: 'https://93.184.215.16/api' }, operations: ['listPets'], overrides: { listPets: { name: `sampled_${n}` } } },
        other: { source: { document: openApiFixture('petstore.json').toString() }, integration: { name: `Other ${n}`, base_url: 'https://93.184.215.16/api' }, operations: ['listPets'], overrides: { listPets: { name: `other_${n}` } } },
      }),
      // The answer carries the signing secret the platform made: a replay gives the same one (answers are kept sealed).
      'POST /api/v1/org/sdk-connections': (n) => ({
        path: '/api/v1/org/sdk-connections',
        body: { name: `Sampled ${n}`, webhook_url: 'https://93.184.215.16' },
        other: { name: `Other ${n}`, webhook_url: 'https://93.184.215.16' },
      }),
      'POST /api/v1/workspaces/:workspace_id/integrations': (n) => ({
        path: `/api/v1/workspaces/${workspaceId}/integrations`,
        body: { name: `Sampled ${n}`, base_url: 'https://93.184.215.16/api', auth: { kind: 'none' } },
        other: { name: `Other ${n}`, base_url: 'https://93.184.215.16/api', auth: { kind: 'none' } },
      }),
      // An event's id comes from the key: a retried emit finds the event it queued.
      'POST /api/v1/org/events': (n) => ({ path: '/api/v1/org/events', body: { name: 'sampled.order.created', payload: { n } }, other: { name: 'other.order.created', payload: { n } } }),
      'POST /api/v1/org/events/ingest/:tenant_id': (n) => ({
        path: `/api/v1/org/events/ingest/${owner.tenant_id}`,
        body: { name: 'sampled.order.ingested', payload: { n } },
        other: { name: 'other.order.ingested', payload: { n } },
      }),
      // A replay makes a new event: a retry must not make a second.
      'POST /api/v1/org/events/:id/replay': (n) => ({ path: `/api/v1/org/events/${orchestrationEventId}/replay`, body: { reason: `Sampled ${n}` }, other: { reason: `Other ${n}` } }),
      // A range replay answers 200 with the replays it made; a retry gets them, not new ones.
      'POST /api/v1/org/events/replay': (n) => ({
        path: '/api/v1/org/events/replay',
        body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', name: 'sampled.order.created', reason: `Sampled ${n}` },
        other: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', name: 'sampled.order.created', reason: `Other ${n}` },
        status: 200,
      }),
      // A visitor's lead: a retry must not leave it twice (the visitor's key, within the organization).
      'POST /api/v1/widget/leads': (n) => ({
        path: '/api/v1/widget/leads',
        widget: true,
        body: { email: `sampled-${n}@example.com` },
        other: { email: `other-${n}@example.com` },
      }),
      'POST /api/v1/workspaces/:workspace_id/tools': (n) => ({
        path: `/api/v1/workspaces/${workspaceId}/tools`,
        body: { integration_id: integrationId, name: `sampled${n}`, method: 'GET', path: '/pets' },
        other: { integration_id: integrationId, name: `other${n}`, method: 'GET', path: '/pets' },
      }),
    };

    async function postRoutes(): Promise<Array<{ route: string; honours: boolean }>> {
      const routes = new Map<string, boolean>();
      for (const router of await server.platform.httpRouters()) {
        for (const layer of router.stack) {
          if (!layer.methods.includes('POST')) continue;
          const route = `POST ${String(layer.path)}`;
          routes.set(route, (routes.get(route) ?? false) || layer.stack.some(honoursIdempotencyKey));
        }
      }
      return [...routes].map(([route, honours]) => ({ route, honours }));
    }

    it('is either an action listed here or honours Idempotency-Key with a sample request', async () => {
      const routes = await postRoutes();
      expect(routes.filter((route) => route.honours).map((route) => route.route)).to.have.members(Object.keys(SAMPLES));
      expect(routes.filter((route) => !route.honours).map((route) => route.route)).to.have.members(Object.keys(ACTIONS));
    });

    it('replays, refuses another body with 422 and a malformed key with 400', async () => {
      let n = 0;
      for (const { route, honours } of await postRoutes()) {
        if (!honours) continue;
        n += 1;
        const sample = SAMPLES[route](n);
        const caller = sample.admin ? { ...owner, token: superAdminToken } : owner;
        const send = (key: string, body: unknown) => {
          if (sample.widget) return server.request('POST', sample.path, { headers: { authorization: `Bearer ${widgetToken}`, 'x-widget-visitor': 'idempotency-visitor-0123456789', 'idempotency-key': key }, body });
          if (!sample.multipart) return server.request('POST', sample.path, { headers: as(caller, key), body });
          const form = multipartForm(body as FormPart[]);
          return server.request('POST', sample.path, { headers: as(caller, key, form.headers), rawBody: form.rawBody });
        };
        const first = await send(`generic-${n}`, sample.body);
        expect(first.status, route).to.equal(sample.status ?? 201);
        const again = await send(`generic-${n}`, sample.body);
        expect([again.status, again.headers.get('idempotent-replayed')], route).to.deep.equal([first.status, 'true']);
        expect(again.json, route).to.deep.equal(first.json);
        expect(await again.events(), route).to.deep.equal([]);
        expect((await send(`generic-${n}`, sample.other)).status, route).to.equal(422);
        expect((await send('', sample.other)).status, route).to.equal(400);
      }
      expect(n).to.equal(Object.keys(SAMPLES).length);
    });
  });
});

describe('Idempotency-Key answers across a restart', () => {
  it('replays the first answer from a new process on the same data', async () => {
    const data = temporaryDirectory();
    try {
      const env = { SCRYPT_LOG_N: '12', DATA_DIR: data.path };
      const before = await startTestServer(env);
      let first;
      let email: string;
      try {
        const owner = await registerOwner(before, 'idem-restart');
        email = owner.email;
        first = await before.request('POST', '/api/v1/org/teams', { headers: { authorization: `Bearer ${owner.token}`, 'idempotency-key': 'restart-key' }, body: { name: 'Durable' } });
        expect(first.status).to.equal(201);
      } finally {
        await before.close();
      }
      const after = await startTestServer(env);
      try {
        const login = await gql(after, LOGIN, { email, password: PASSWORD });
        const token = login.json.data.login.token as string;
        const again = await after.request('POST', '/api/v1/org/teams', { headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'restart-key' }, body: { name: 'Durable' } });
        expect(again.status).to.equal(201);
        expect(again.headers.get('idempotent-replayed')).to.equal('true');
        expect(again.json).to.deep.equal(first.json);
      } finally {
        await after.close();
      }
    } finally {
      data.remove();
    }
  });
});
