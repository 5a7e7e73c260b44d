// Leads over HTTP against the real server: `POST /api/v1/widget/leads` with the widget token
// (every refusal: token, origin, visitor, fields, the lead form turned off, the hourly budgets),
// `GET /api/v1/tenant/leads` for the organization's admins, and the `lead_crm_delivery` saga
// sending each lead to local servers standing where the CRMs are (the deployment allows plain
// http and private addresses here, as a development one would): HubSpot's, Salesforce's and
// Pipedrive's create calls with their credentials, and the signed webhook, verified with the
// connector SDK's own verifier. Time is the platform's clock, moved by hand, and the due passes
// are run by hand (the background ones are an hour apart).

import { expect } from 'chai';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { conversationStream } from '../../domain/conversation/conversation';
import { verifySignature } from '../../adapters/connector-sdk/signing';
import { CRM_FAILURE_EMAILS } from '../../application/lead/crm-failure-emails';
import { LEAD_CRM_DELIVERY, LEAD_DELIVERY_ID_HEADER } from '../../application/lead/lead-crm-delivery';
import { SagaRunner } from '../../application/sagas/saga-runner';
import { identitySignature, verifiedPartyId } from '../../application/widget/widget-access';
import { leadStream } from '../../domain/lead/lead';
import { expectEveryEventAudited } from '../support/audit';
import { type CrmServer, startCrmServer } from '../support/crm-server';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type TenantWidget, asVisitor, configureWidget, newVisitorId, rotateWidgetToken, visitorAsks, visitorPartyOf, widgetOf } from '../support/widget-visitors';

const MAX_ATTEMPTS = 3;
const LEADS_PER_HOUR = 4;

describe('widget leads (POST /api/v1/widget/leads, GET /api/v1/tenant/leads, saga lead_crm_delivery)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let crm: CrmServer;
  let owner: Account;
  let member: Account;
  let widget: TenantWidget;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const nowSeconds = (): number => Math.floor(clock.now().getTime() / 1000);
  const leave = (token: string, visitorId: string, body: unknown, extra: Record<string, string> = {}) => server.request('POST', '/api/v1/widget/leads', { headers: asVisitor(token, visitorId, extra), body });

  async function leads(query = '', account: Account = owner): Promise<Array<Record<string, any>>> {
    const response = await server.request('GET', `/api/v1/tenant/leads${query}`, { headers: as(account) });
    expect(response.status, response.text).to.equal(200);
    return response.json.items;
  }
  const leadNamed = async (id: string): Promise<Record<string, any> | undefined> => (await leads('?limit=1000')).find((lead) => lead.id === id);

  async function settled(): Promise<void> {
    await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());
  }

  async function configureCrm(body: Record<string, unknown>): Promise<void> {
    const response = await server.request('POST', '/api/v1/tenant/crm', { headers: as(owner), body });
    expect(response.status, response.text).to.equal(200);
  }

  before(async () => {
    clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        OUTBOUND_ALLOW_INSECURE: 'true',
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        CRM_DELIVERY_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        CRM_DELIVERY_RETRY_BASE_SECONDS: '1',
        WIDGET_LEADS_PER_HOUR: String(LEADS_PER_HOUR),
        WIDGET_LEADS_PER_IP_PER_HOUR: '1000',
      },
      { clock, sagaRetryPollMs: 3_600_000 },
    );
    crm = await startCrmServer();
    owner = await registerOwner(server, 'leads-org');
    member = await joinAs(server, await registerOwner(server, 'leads-member-home', 'leads-member@example.com'), owner.tenant_id, 'member');
    widget = await widgetOf(server, owner);
  });
  after(async () => {
    await crm.close();
    await server.close();
  });

  describe('capturing a lead', () => {
    it('records the visitor’s lead (201 {lead_id}), the visitor as actor, listed unsent while no CRM is configured', async () => {
      const visitorId = newVisitorId();
      const response = await leave(widget.token, visitorId, { name: 'Ada Lovelace', email: 'Ada@Example.com', phone: '', company: 'Analytical Engines', message: 'Please call me\nafter five', page_url: 'https://shop.example.com/pricing' });
      expect(response.status, response.text).to.equal(201);
      expect(Object.keys(response.json)).to.deep.equal(['lead_id']);
      expect(await response.events()).to.deep.equal(['LeadCaptured@lead']);
      const [recorded] = await server.platform.eventStore.readStream(`lead-${response.json.lead_id}`);
      const party = visitorPartyOf(server, visitorId);
      expect(recorded!.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: party });
      expect(JSON.stringify(recorded!.data)).to.not.include(visitorId);
      const listed = await leadNamed(response.json.lead_id);
      expect(listed).to.deep.equal({
        id: response.json.lead_id,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        phone: null,
        company: 'Analytical Engines',
        message: 'Please call me\nafter five',
        page_url: 'https://shop.example.com/pricing',
        conversation_id: null,
        source: 'widget',
        visitor: party,
        verified_user_id: null,
        captured_at: clock.now().toISOString(),
        crm_status: 'not_sent',
        crm: null,
      });
    });

    it('ties a lead to the visitor’s own widget conversation, and to no other (404)', async () => {
      const visitorId = newVisitorId();
      const turn = await visitorAsks(server, widget, visitorId, 'Do you ship to Norway?');
      const mine = await leave(widget.token, visitorId, { email: 'nora@example.no', conversation_id: turn.conversation_id });
      expect(mine.status, mine.text).to.equal(201);
      expect((await leadNamed(mine.json.lead_id))?.conversation_id).to.equal(turn.conversation_id);

      const stranger = await leave(widget.token, newVisitorId(), { email: 'eve@example.com', conversation_id: turn.conversation_id });
      expect(stranger.status).to.equal(404);
      expect(stranger.json.code).to.equal('conversation_not_found');
      const consoleConversation = (await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message: 'A console question' } })).json.conversation_id;
      expect((await leave(widget.token, visitorId, { email: 'nora@example.no', conversation_id: consoleConversation })).status).to.equal(404);
      expect((await leave(widget.token, visitorId, { email: 'nora@example.no', conversation_id: 'no-such-conversation' })).status).to.equal(404);
      expect(await stranger.events()).to.deep.equal([]);
    });

    it('answers 400 naming each bad field, and records nothing', async () => {
      const visitorId = newVisitorId();
      const cases: Array<[unknown, string, string]> = [
        [{ name: 'Ada' }, 'email', 'invalid_lead'],
        [{ email: '', phone: '  ' }, 'email', 'invalid_lead'],
        [{ email: 'ada at example' }, 'email', 'invalid_lead'],
        [{ phone: '123' }, 'phone', 'invalid_lead'],
        [{ email: 'ada@example.com', name: 'n'.repeat(201) }, 'name', 'invalid_lead'],
        [{ email: 'ada@example.com', company: 'Bad\u0007Co' }, 'company', 'invalid_lead'],
        [{ email: 'ada@example.com', message: 'm'.repeat(2001) }, 'message', 'invalid_lead'],
        [{ email: 'ada@example.com', page_url: 'ftp://shop.example.com' }, 'page_url', 'invalid_lead'],
        [{ email: 42 }, 'email', 'invalid_request'],
        [{ email: 'ada@example.com', conversation_id: 7 }, 'conversation_id', 'invalid_request'],
      ];
      for (const [body, field, code] of cases) {
        const response = await leave(widget.token, visitorId, body);
        expect([response.status, response.json.code, response.json.field], JSON.stringify(body)).to.deep.equal([400, code, field]);
        expect(await response.events()).to.deep.equal([]);
      }
    });

    it('answers 401 for a missing, unknown or rotated widget token and for a user token; the widget token opens no other route', async () => {
      const visitorId = newVisitorId();
      const body = { email: 'ada@example.com' };
      const missing = await server.request('POST', '/api/v1/widget/leads', { headers: { 'x-widget-visitor': visitorId }, body });
      expect([missing.status, missing.json.code]).to.deep.equal([401, 'invalid_widget_token']);
      expect((await leave('wt_not-a-token-of-anyone', visitorId, body)).json.code).to.equal('invalid_widget_token');
      expect((await server.request('POST', '/api/v1/widget/leads', { headers: { ...as(owner), 'x-widget-visitor': visitorId }, body })).status).to.equal(401);
      for (const path of ['/api/v1/org/members', '/api/v1/org/workspaces', '/api/v1/tenant/leads']) {
        expect((await server.request('GET', path, { headers: { authorization: `Bearer ${widget.token}` } })).status, path).to.equal(401);
      }

      const other = await registerOwner(server, 'leads-rotating-org');
      const before = await widgetOf(server, other);
      expect((await leave(before.token, visitorId, body)).status).to.equal(201);
      const after = await rotateWidgetToken(server, other);
      const old = await leave(before.token, visitorId, body);
      expect([old.status, old.json.code]).to.deep.equal([401, 'invalid_widget_token']);
      expect(await old.events()).to.deep.equal([]);
      expect((await leave(after, visitorId, body)).status).to.equal(201);
    });

    it('files a lead sent with another organization’s widget token under that organization, and none of this one’s conversations', async () => {
      const visitorId = newVisitorId();
      const turn = await visitorAsks(server, widget, visitorId, 'Hello?');
      const elsewhere = await registerOwner(server, 'leads-elsewhere');
      const theirs = await widgetOf(server, elsewhere);
      const refused = await leave(theirs.token, visitorId, { email: 'ada@example.com', conversation_id: turn.conversation_id });
      expect(refused.status).to.equal(404);
      const filed = await leave(theirs.token, visitorId, { email: 'filed-elsewhere@example.com' });
      expect(filed.status).to.equal(201);
      expect(await leadNamed(filed.json.lead_id)).to.equal(undefined);
      expect((await leads('?limit=1000', elsewhere)).map((lead) => lead.id)).to.include(filed.json.lead_id);
    });

    it('answers 403 for a page on an origin the organization does not allow, with CORS only for allowed ones', async () => {
      const org = await registerOwner(server, 'leads-origins');
      const own = await widgetOf(server, org);
      await configureWidget(server, org.tenant_id, { allowed_origins: ['https://shop.example.com'] });
      const visitorId = newVisitorId();
      const refused = await leave(own.token, visitorId, { email: 'ada@example.com' }, { origin: 'https://evil.example.net' });
      expect([refused.status, refused.json.code]).to.deep.equal([403, 'origin_not_allowed']);
      expect(refused.headers.get('access-control-allow-origin')).to.equal(null);
      expect(await refused.events()).to.deep.equal([]);
      const allowed = await leave(own.token, visitorId, { email: 'ada@example.com' }, { origin: 'https://shop.example.com' });
      expect(allowed.status).to.equal(201);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
    });

    it('answers 400 without a well-formed visitor header, and 403 when the organization turned the lead form off', async () => {
      const missing = await server.request('POST', '/api/v1/widget/leads', { headers: { authorization: `Bearer ${widget.token}` }, body: { email: 'ada@example.com' } });
      expect([missing.status, missing.json.code, missing.json.field]).to.deep.equal([400, 'invalid_visitor', 'visitor_id']);
      expect((await leave(widget.token, 'short', { email: 'ada@example.com' })).json.code).to.equal('invalid_visitor');

      const org = await registerOwner(server, 'leads-no-form');
      const own = await widgetOf(server, org);
      await configureWidget(server, org.tenant_id, { lead_form: false });
      const off = await leave(own.token, newVisitorId(), { email: 'ada@example.com' });
      expect([off.status, off.json.code, off.json.setting]).to.deep.equal([403, 'widget_feature_disabled', 'lead_form']);
      expect(await off.events()).to.deep.equal([]);
    });

    it(`answers 429 past ${LEADS_PER_HOUR} leads of one visitor an hour, with Retry-After; others are not held up`, async () => {
      const visitorId = newVisitorId();
      for (let n = 0; n < LEADS_PER_HOUR; n += 1) expect((await leave(widget.token, visitorId, { email: `many-${n}@example.com` })).status).to.equal(201);
      const refused = await leave(widget.token, visitorId, { email: 'one-more@example.com' });
      expect([refused.status, refused.json.code]).to.deep.equal([429, 'rate_limited']);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(await refused.events()).to.deep.equal([]);
      // A bad field spends nothing, and another visitor has a budget of their own.
      expect((await leave(widget.token, visitorId, { email: 'broken' })).status).to.equal(400);
      expect((await leave(widget.token, newVisitorId(), { email: 'fresh@example.com' })).status).to.equal(201);
    });

    it('gives a retry with the same Idempotency-Key the first answer, and records one lead', async () => {
      const visitorId = newVisitorId();
      const first = await leave(widget.token, visitorId, { email: 'once@example.com' }, { 'idempotency-key': 'lead-once' });
      const again = await leave(widget.token, visitorId, { email: 'once@example.com' }, { 'idempotency-key': 'lead-once' });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
      expect((await leave(widget.token, visitorId, { email: 'twice@example.com' }, { 'idempotency-key': 'lead-once' })).status).to.equal(422);
    });
  });

  describe('the list', () => {
    it('is for owners and admins: a member is 403; filters by crm_status and by when, newest first, in cursor pages', async () => {
      expect((await server.request('GET', '/api/v1/tenant/leads', { headers: as(member) })).status).to.equal(403);
      expect((await server.request('GET', '/api/v1/tenant/leads')).status).to.equal(401);
      const all = await leads('?limit=1000');
      expect(all.length).to.be.greaterThan(3);
      expect(all.every((lead) => lead.crm_status === 'not_sent')).to.equal(true);
      expect(await leads('?crm_status=sent')).to.deep.equal([]);
      expect(await leads('?from=2026-11-23')).to.deep.equal([]);
      expect((await leads('?from=2026-11-22&to=2026-11-22&limit=1000')).length).to.equal(all.length);
      const first = await server.request('GET', '/api/v1/tenant/leads?limit=2', { headers: as(owner) });
      const second = await server.request('GET', `/api/v1/tenant/leads?limit=2&cursor=${first.json.next_cursor}`, { headers: as(owner) });
      expect(second.json.items.map((lead: { id: string }) => lead.id)).to.deep.equal(all.slice(2, 4).map((lead) => lead.id));
      for (const [query, field] of [['crm_status=lost', 'crm_status'], ['from=yesterday', 'from'], ['from=2026-11-23&to=2026-11-22', 'from'], ['limit=0', 'limit']]) {
        const bad = await server.request('GET', `/api/v1/tenant/leads?${query}`, { headers: as(owner) });
        expect([bad.status, bad.json.field], query).to.deep.equal([400, field]);
      }
    });
  });

  describe('deleting a lead (DELETE /api/v1/tenant/leads/{id})', () => {
    it('is for owners and admins: 204, the lead leaves the list; again, unknown or another organization’s is 404', async () => {
      const left = await leave(widget.token, newVisitorId(), { email: 'forget-me@example.com' });
      const id = left.json.lead_id as string;
      const path = `/api/v1/tenant/leads/${id}`;
      expect((await server.request('DELETE', path)).status).to.equal(401);
      const denied = await server.request('DELETE', path, { headers: as(member) });
      expect([denied.status, denied.json.code]).to.deep.equal([403, 'insufficient_role']);
      expect(await leadNamed(id)).to.not.equal(undefined);

      const other = await registerOwner(server, 'leads-other-org');
      const othersLead = (await leave((await widgetOf(server, other)).token, newVisitorId(), { phone: '+44 20 7946 0958' })).json.lead_id as string;
      for (const target of [othersLead, 'no-such-lead', '01a22ace-0000-7000-8000-000000000000']) {
        const missing = await server.request('DELETE', `/api/v1/tenant/leads/${target}`, { headers: as(owner) });
        expect([missing.status, missing.json.code], target).to.deep.equal([404, 'lead_not_found']);
      }
      expect((await server.request('GET', '/api/v1/tenant/leads', { headers: as(other) })).json.items.map((lead: { id: string }) => lead.id)).to.deep.equal([othersLead]);

      expect((await server.request('DELETE', path, { headers: as(owner) })).status).to.equal(204);
      expect(await leadNamed(id)).to.equal(undefined);
      const again = await server.request('DELETE', path, { headers: as(owner) });
      expect([again.status, again.json.code]).to.deep.equal([404, 'lead_not_found']);
      const recorded = await server.platform.eventStore.readStream(`lead-${id}`);
      expect(recorded.map((event) => event.type)).to.deep.equal(['LeadCaptured', 'LeadDeleted']);
      expect(recorded[1]!.data).to.deep.include({ lead_id: id, tenant_id: owner.tenant_id, deleted_by: { kind: 'user', id: owner.user_id } });
    });
  });

  describe('erasing a lead (POST /api/v1/tenant/leads/{id}/erase)', () => {
    const erase = (id: string, account: Account | null = owner) => server.request('POST', `/api/v1/tenant/leads/${id}/erase`, { headers: account ? as(account) : {} });
    const storedLead = async (id: string): Promise<string> => JSON.stringify(await server.platform.storedEvents.readStream(`lead-${id}`));

    it('keeps what was captured sealed in the event log, and in clear in the list', async () => {
      const id = (await leave(widget.token, newVisitorId(), { name: 'Grace Hopper', email: 'grace@example.com', phone: '+1 555 0100', company: 'Navy', message: 'Call me', page_url: 'https://shop.example.com/' })).json.lead_id as string;
      const stored = await storedLead(id);
      for (const text of ['Grace Hopper', 'grace@example.com', '555 0100', 'Navy', 'Call me', 'shop.example.com']) expect(stored).to.not.include(text);
      expect(stored).to.include(`"subject":"lead:${id}"`);
      expect(await leadNamed(id)).to.deep.include({ name: 'Grace Hopper', email: 'grace@example.com', phone: '+1 555 0100', company: 'Navy', message: 'Call me', page_url: 'https://shop.example.com/' });
    });

    it('is for owners and admins; erases for good: unreadable in the events, gone from the list; again answers the first; unknown or another organization’s is 404', async () => {
      const id = (await leave(widget.token, newVisitorId(), { name: 'Erase Me', email: 'erase-me@example.com' })).json.lead_id as string;
      expect((await erase(id, null)).status).to.equal(401);
      const denied = await erase(id, member);
      expect([denied.status, denied.json.code]).to.deep.equal([403, 'insufficient_role']);
      const other = await registerOwner(server, 'leads-erasure-other-org');
      for (const [target, account] of [[id, other], ['01a22ace-0000-7000-8000-000000000000', owner]] as const) {
        const missing = await erase(target, account);
        expect([missing.status, missing.json.code], target).to.deep.equal([404, 'lead_not_found']);
      }
      expect((await leadNamed(id))?.email).to.equal('erase-me@example.com');

      const erased = await erase(id);
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.deep.equal({ id, erased_at: clock.now().toISOString(), conversation_id: null });
      expect(await leadNamed(id)).to.equal(undefined);
      const recorded = await server.platform.eventStore.readStream(`lead-${id}`);
      expect(recorded.map((event) => event.type)).to.deep.equal(['LeadCaptured', 'LeadErased']);
      expect(recorded[0]!.data).to.deep.include({ name: ERASED_PERSONAL_DATA, email: ERASED_PERSONAL_DATA, phone: null, company: null, lead_id: id });
      expect(recorded[1]!.data).to.deep.include({ lead_id: id, tenant_id: owner.tenant_id, erased_by: { kind: 'user', id: owner.user_id } });
      clock.advance(1000);
      expect((await erase(id)).json).to.deep.equal(erased.json);

      const deletedFirst = (await leave(widget.token, newVisitorId(), { email: 'deleted-then-erased@example.com' })).json.lead_id as string;
      expect((await server.request('DELETE', `/api/v1/tenant/leads/${deletedFirst}`, { headers: as(owner) })).status).to.equal(204);
      expect((await erase(deletedFirst)).status).to.equal(200);
      const [captured] = await server.platform.eventStore.readStream(`lead-${deletedFirst}`);
      expect(captured!.data).to.deep.include({ email: ERASED_PERSONAL_DATA });
    });

    it('erases the widget conversation the lead was left in with it, and the other way round: both hold the same visitor', async () => {
      const visitorId = newVisitorId();
      const turn = await visitorAsks(server, widget, visitorId, 'I am Hedy Lamarr, can you call me back?');
      const id = (await leave(widget.token, visitorId, { name: 'Hedy Lamarr', email: 'hedy@example.com', conversation_id: turn.conversation_id })).json.lead_id as string;
      const erased = await erase(id);
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.deep.include({ id, conversation_id: turn.conversation_id });
      const conversation = await server.platform.eventStore.readStream(conversationStream(turn.conversation_id));
      expect(conversation.map((event) => event.type)).to.include('ConversationErased');
      expect(conversation[0]!.data).to.deep.include({ title: ERASED_PERSONAL_DATA });

      // Erasing the conversation erases the leads left in it, a deleted one too.
      const other = newVisitorId();
      const asked = await visitorAsks(server, widget, other, 'Ring me, I am Alan');
      const first = (await leave(widget.token, other, { name: 'Alan', phone: '+44 20 7946 0000', conversation_id: asked.conversation_id })).json.lead_id as string;
      const second = (await leave(widget.token, other, { email: 'alan@example.co.uk', conversation_id: asked.conversation_id })).json.lead_id as string;
      expect((await server.request('DELETE', `/api/v1/tenant/leads/${second}`, { headers: as(owner) })).status).to.equal(204);
      const unrelated = (await leave(widget.token, other, { email: 'unrelated@example.com' })).json.lead_id as string;
      const wiped = await server.request('POST', `/api/v1/conversations/${asked.conversation_id}/erase`, { headers: as(owner) });
      expect(wiped.status, wiped.text).to.equal(200);
      for (const leadId of [first, second]) {
        const events = await server.platform.eventStore.readStream(`lead-${leadId}`);
        expect(events.map((event) => event.type), leadId).to.include('LeadErased');
        expect(JSON.stringify(events[0]!.data)).to.not.match(/Alan|7946|alan@/);
      }
      expect((await leadNamed(unrelated))?.email).to.equal('unrelated@example.com');
    });
  });

  describe('delivery to the CRM', () => {
    before(async () => {
      await subscribeTo(server, owner.tenant_id, 'growth');
    });

    async function sentLead(body: Record<string, unknown>): Promise<Record<string, any>> {
      const response = await leave(widget.token, newVisitorId(), body);
      expect(response.status, response.text).to.equal(201);
      await eventually(async () => (await leadNamed(response.json.lead_id))?.crm_status === 'sent', 10_000, 'the lead sent');
      return (await leadNamed(response.json.lead_id))!;
    }

    it('hubspot: creates a contact with the private app token, and lists the lead sent with HubSpot’s id', async () => {
      await configureCrm({ kind: 'hubspot', url: crm.url, credential: 'pat-na1-0123456789abcdef', field_mapping: { page_url: 'website' } });
      const before = crm.requests.length;
      const lead = await sentLead({ name: 'Grace Brewster Hopper', email: 'grace@example.com', company: 'Navy', page_url: 'https://shop.example.com/' });
      const [call] = crm.requests.slice(before);
      expect(call).to.deep.include({ method: 'POST', path: '/crm/v3/objects/contacts' });
      expect(call!.headers).to.include({ authorization: 'Bearer pat-na1-0123456789abcdef', 'content-type': 'application/json', [LEAD_DELIVERY_ID_HEADER]: lead.id });
      expect(JSON.parse(call!.body.toString())).to.deep.equal({ properties: { email: 'grace@example.com', firstname: 'Grace Brewster', lastname: 'Hopper', company: 'Navy', website: 'https://shop.example.com/' } });
      expect(lead.crm).to.deep.include({ kind: 'hubspot', attempts: 1, last_status_code: 201, last_error: null, record_id: String(500 + crm.requests.length), sent_at: clock.now().toISOString(), failed_at: null });
      const recorded = await server.platform.eventStore.readStream(`lead-${lead.id}`);
      expect(recorded.map((event) => event.type)).to.deep.equal(['LeadCaptured', 'LeadCrmDeliveryRequested', 'LeadCrmAttemptStarted', 'LeadSentToCrm']);
      for (const event of recorded.slice(1)) expect(event.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'system', id: LEAD_CRM_DELIVERY }, causation_id: recorded[0]!.id });
      expect(JSON.stringify(recorded)).to.not.include('pat-na1');
    });

    it('salesforce: creates a Lead with the access token (LastName and Company filled in when missing)', async () => {
      await configureCrm({ kind: 'salesforce', url: `${crm.url}/`, credential: '00D5g000004XYZ!AQ0AQ.token', field_mapping: {} });
      const before = crm.requests.length;
      const lead = await sentLead({ phone: '+1 415 555 0100', message: 'Quote for 40 seats' });
      const [call] = crm.requests.slice(before);
      expect(call).to.deep.include({ method: 'POST', path: '/services/data/v60.0/sobjects/Lead' });
      expect(call!.headers.authorization).to.equal('Bearer 00D5g000004XYZ!AQ0AQ.token');
      expect(JSON.parse(call!.body.toString())).to.deep.equal({ Phone: '+1 415 555 0100', Description: 'Quote for 40 seats', LastName: '+1 415 555 0100', Company: '[not provided]' });
      expect(lead.crm.record_id).to.equal(`00Q5g00000Lead${crm.requests.length}`);
    });

    it('pipedrive: creates a person with the API token in its header, never in the URL', async () => {
      await configureCrm({ kind: 'pipedrive', url: `${crm.url}/api`, credential: 'a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1', field_mapping: { company: 'f1e2d3c4b5a6f1e2d3c4b5a6f1e2d3c4b5a6f1e2' } });
      const before = crm.requests.length;
      const lead = await sentLead({ name: 'Katherine Johnson', email: 'kj@example.com', company: 'NASA' });
      const [call] = crm.requests.slice(before);
      expect(call).to.deep.include({ method: 'POST', path: '/api/v1/persons' });
      expect(call!.headers['x-api-token']).to.equal('a0b1c2d3e4f5a0b1c2d3e4f5a0b1c2d3e4f5a0b1');
      expect(JSON.parse(call!.body.toString())).to.deep.equal({
        f1e2d3c4b5a6f1e2d3c4b5a6f1e2d3c4b5a6f1e2: 'NASA',
        name: 'Katherine Johnson',
        email: [{ value: 'kj@example.com', primary: true, label: 'work' }],
      });
      expect(lead.crm.record_id).to.equal(String(70 + crm.requests.length));
    });

    it('webhook: posts the lead signed with the credential, as the handoff webhook is signed', async () => {
      const secret = 'crm-webhook-secret-0123456789';
      await configureCrm({ kind: 'webhook', url: `${crm.url}/hooks/leads`, credential: secret, field_mapping: { email: 'contact_email' } });
      const before = crm.requests.length;
      const visitorId = newVisitorId();
      const turn = await visitorAsks(server, widget, visitorId, 'Can someone call me?');
      const response = await leave(widget.token, visitorId, { name: 'Ada', email: 'ada@example.com', conversation_id: turn.conversation_id });
      await eventually(async () => (await leadNamed(response.json.lead_id))?.crm_status === 'sent', 10_000, 'the lead sent');
      const [call] = crm.requests.slice(before);
      expect(call!.path).to.equal('/hooks/leads');
      expect(call!.headers).to.include({ 'content-type': 'application/json', 'x-svc-event': 'lead.captured', [LEAD_DELIVERY_ID_HEADER]: response.json.lead_id, 'x-svc-timestamp': String(nowSeconds()) });
      const check = verifySignature({ secrets: [secret], signature: call!.headers['x-svc-signature'], timestamp: call!.headers['x-svc-timestamp'], rawBody: call!.body, nowSeconds: nowSeconds(), maxSkewSeconds: 300 });
      expect(check).to.deep.equal({ valid: true, secretIndex: 0 });
      const payload = JSON.parse(call!.body.toString());
      expect(payload).to.deep.include({ type: 'lead.captured', delivery_id: response.json.lead_id, tenant_id: owner.tenant_id, captured_at: clock.now().toISOString() });
      expect(payload.lead).to.deep.equal({
        id: response.json.lead_id,
        name: 'Ada',
        first_name: 'Ada',
        last_name: null,
        email: 'ada@example.com',
        phone: null,
        company: null,
        message: null,
        source: 'widget',
        page_url: null,
        conversation_id: turn.conversation_id,
        visitor: visitorPartyOf(server, visitorId),
        verified_user_id: null,
      });
      expect(payload.fields).to.deep.equal({ name: 'Ada', first_name: 'Ada', contact_email: 'ada@example.com', source: 'widget', conversation_id: turn.conversation_id });
    });

    it('tells the CRM and the list the host site’s user id of a visitor it vouched for, kept sealed in the log', async () => {
      const secret = (await server.request('POST', '/api/v1/tenant/widget/identity-secret', { headers: as(owner) })).json.identity_secret;
      const optional = await server.request('POST', '/api/v1/tenant/widget', { headers: as(owner), body: { identity_verification: 'optional' } });
      expect(optional.status, optional.text).to.equal(200);
      try {
        await configureCrm({ kind: 'webhook', url: `${crm.url}/hooks/leads`, field_mapping: {} });
        const before = crm.requests.length;
        const signed = { 'x-widget-user-id': 'customer-77', 'x-widget-user-hash': identitySignature(secret, 'customer-77') };
        const response = await leave(widget.token, newVisitorId(), { name: 'Grace', email: 'grace@example.com' }, signed);
        expect(response.status, response.text).to.equal(201);
        await eventually(async () => (await leadNamed(response.json.lead_id))?.crm_status === 'sent', 10_000, 'the lead sent');
        const party = { kind: 'end_user', id: verifiedPartyId(server.platform.secrets, owner.tenant_id, 'customer-77') };
        const delivered = JSON.parse(crm.requests.slice(before)[0]!.body.toString());
        expect(delivered.lead).to.deep.include({ visitor: party, verified_user_id: 'customer-77' });
        expect(delivered.fields).to.deep.include({ verified_user_id: 'customer-77' });
        expect(await leadNamed(response.json.lead_id)).to.deep.include({ visitor: party, verified_user_id: 'customer-77' });
        expect(JSON.stringify(await server.platform.storedEvents.readStream(leadStream(response.json.lead_id)))).to.not.include('customer-77');

        // A CRM of its own kind takes it as the property the organization maps it to.
        await configureCrm({ kind: 'hubspot', url: crm.url, credential: 'pat-na1-0123456789abcdef', field_mapping: { verified_user_id: 'shop_customer_id' } });
        const beforeHubspot = crm.requests.length;
        const mapped = await leave(widget.token, newVisitorId(), { email: 'grace@example.com' }, signed);
        expect(mapped.status, mapped.text).to.equal(201);
        await eventually(async () => (await leadNamed(mapped.json.lead_id))?.crm_status === 'sent', 10_000, 'the lead sent to HubSpot');
        expect(JSON.parse(crm.requests.slice(beforeHubspot)[0]!.body.toString())).to.deep.equal({ properties: { email: 'grace@example.com', shop_customer_id: 'customer-77' } });
      } finally {
        await server.request('POST', '/api/v1/tenant/widget', { headers: as(owner), body: { identity_verification: 'off' } });
      }
    });

    it('retries a failing CRM with exponential back-off, keeping its answer, and ends failed after the last attempt', async () => {
      await configureCrm({ kind: 'hubspot', url: crm.url, credential: 'pat-na1-0123456789abcdef', field_mapping: {} });
      crm.answerWith({ status: 503, body: { status: 'error', message: 'Service busy' } }, { status: 409, body: { status: 'error', message: 'Contact already exists. Existing ID: 12' } }, { status: 500 });
      const before = crm.requests.length;
      const response = await leave(widget.token, newVisitorId(), { email: 'busy@example.com' });
      const id = response.json.lead_id;
      await eventually(async () => (await leadNamed(id))?.crm_status === 'retrying', 10_000, 'the first failure recorded');
      const startedAt = clock.now().getTime();
      let listed = await leadNamed(id);
      expect(listed!.crm).to.deep.include({ attempts: 1, last_status_code: 503, next_attempt_at: new Date(startedAt + 1000).toISOString() });
      expect(listed!.crm.last_error).to.equal('the CRM answered HTTP 503: {"status":"error","message":"Service busy"}');

      await server.platform.sagas.runDue();
      expect(crm.requests.length).to.equal(before + 1);
      clock.advance(1000);
      await server.platform.sagas.runDue();
      await settled();
      listed = await leadNamed(id);
      expect(listed!.crm).to.deep.include({ attempts: 2, last_status_code: 409, next_attempt_at: new Date(startedAt + 3000).toISOString() });
      expect(listed!.crm.last_error).to.include('Contact already exists');
      clock.advance(2000);
      await server.platform.sagas.runDue();
      await settled();
      listed = await leadNamed(id);
      expect(listed).to.deep.include({ crm_status: 'failed' });
      expect(listed!.crm).to.deep.include({ attempts: MAX_ATTEMPTS, last_status_code: 500, next_attempt_at: null, failed_at: clock.now().toISOString() });
      expect((await leads('?crm_status=failed')).map((lead) => lead.id)).to.include(id);
      const recorded = await server.platform.eventStore.readStream(`lead-${id}`);
      expect(recorded.map((event) => event.type)).to.deep.equal([
        'LeadCaptured',
        'LeadCrmDeliveryRequested',
        'LeadCrmAttemptStarted',
        'LeadCrmDeliveryFailed',
        'LeadCrmAttemptStarted',
        'LeadCrmDeliveryFailed',
        'LeadCrmAttemptStarted',
        'LeadCrmDeliveryAbandoned',
      ]);
      clock.advance(3_600_000);
      await server.platform.sagas.runDue();
      expect(crm.requests.length).to.equal(before + MAX_ATTEMPTS);
    });

    it('gives a delivery up when the CRM is turned off before its next attempt, and sends nothing while it is off', async () => {
      crm.answerWith({ status: 502 });
      const response = await leave(widget.token, newVisitorId(), { email: 'off@example.com' });
      const id = response.json.lead_id;
      await eventually(async () => (await leadNamed(id))?.crm_status === 'retrying', 10_000, 'the failure recorded');
      await configureCrm({ kind: 'hubspot', url: crm.url, enabled: false });
      const before = crm.requests.length;
      clock.advance(1000);
      await server.platform.sagas.runDue();
      await settled();
      const listed = await leadNamed(id);
      expect(listed).to.deep.include({ crm_status: 'failed' });
      expect(listed!.crm).to.deep.include({ attempts: 1, last_error: 'the CRM connector is turned off for this organization' });
      expect(crm.requests.length).to.equal(before);

      const unsent = await leave(widget.token, newVisitorId(), { email: 'later@example.com' });
      const [capturedUnsent] = await server.platform.eventStore.readStream(`lead-${unsent.json.lead_id}`);
      await eventually(() => sagaPast(capturedUnsent!.position), 10_000, 'the saga past the lead');
      expect((await server.platform.eventStore.readStream(`lead-${unsent.json.lead_id}`)).map((event) => event.type)).to.deep.equal(['LeadCaptured']);
      expect((await leadNamed(unsent.json.lead_id))?.crm_status).to.equal('not_sent');
    });

    it('ends a delivery still under way when its lead is deleted, and calls the CRM no more', async () => {
      await configureCrm({ kind: 'hubspot', url: crm.url, enabled: true });
      crm.answerWith({ status: 503 });
      const response = await leave(widget.token, newVisitorId(), { email: 'deleted-while-retrying@example.com' });
      const id = response.json.lead_id;
      await eventually(async () => (await leadNamed(id))?.crm_status === 'retrying', 10_000, 'the failure recorded');
      const before = crm.requests.length;
      expect((await server.request('DELETE', `/api/v1/tenant/leads/${id}`, { headers: as(owner) })).status).to.equal(204);
      const recorded = await server.platform.eventStore.readStream(`lead-${id}`);
      expect(recorded.slice(-2).map((event) => event.type)).to.deep.equal(['LeadCrmDeliveryAbandoned', 'LeadDeleted']);
      expect(recorded.at(-2)!.data).to.deep.include({ attempts: 1, error: 'the lead was deleted' });
      clock.advance(3_600_000);
      await server.platform.sagas.runDue();
      await settled();
      expect(crm.requests.length).to.equal(before);
      expect((await server.platform.eventStore.readStream(`lead-${id}`)).length).to.equal(recorded.length);
    });

    it('ends a delivery still under way when its lead is erased, as when it is deleted', async () => {
      await configureCrm({ kind: 'hubspot', url: crm.url, enabled: true });
      crm.answerWith({ status: 503 });
      const id = (await leave(widget.token, newVisitorId(), { email: 'erased-while-retrying@example.com' })).json.lead_id;
      await eventually(async () => (await leadNamed(id))?.crm_status === 'retrying', 10_000, 'the failure recorded');
      const before = crm.requests.length;
      expect((await server.request('POST', `/api/v1/tenant/leads/${id}/erase`, { headers: as(owner) })).status).to.equal(200);
      const recorded = await server.platform.eventStore.readStream(`lead-${id}`);
      expect(recorded.slice(-2).map((event) => event.type)).to.deep.equal(['LeadCrmDeliveryAbandoned', 'LeadErased']);
      clock.advance(3_600_000);
      await server.platform.sagas.runDue();
      await settled();
      expect(crm.requests.length).to.equal(before);
    });

    it('emails the owner, not a member, when the CRM failed every attempt, without the lead’s details; not for a delivery withdrawn', async () => {
      // The tests above: one lead failed every attempt; three deliveries were withdrawn, an hour later (CRM off, lead deleted, lead erased).
      const exhausted = (await leads('?crm_status=failed&limit=1000')).filter((lead) => lead.crm.attempts === MAX_ATTEMPTS);
      expect(exhausted).to.have.length(1);
      const [last] = await server.platform.eventStore.readAll({ direction: 'backwards', maxCount: 1, filter: { kind: 'event_type', types: ['LeadCrmDeliveryAbandoned'] } });
      expect(last.data).to.deep.include({ reason: 'withdrawn' });
      await eventually(async () => ((await server.platform.readStore.getProjectionState(`saga:${CRM_FAILURE_EMAILS}-v1`))?.checkpoint ?? 0) >= last.position, 10_000, 'the saga past the last delivery given up');
      const queued = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['EmailQueued'] } });
      const told = queued.flatMap((event) => (event.type === 'EmailQueued' && event.data.kind === 'crm_failure' ? [{ to: event.data.to, subject: event.data.subject, text: server.platform.secrets.open(event.data.body_sealed) }] : []));
      expect(told.map((email) => email.to)).to.deep.equal([owner.email]);
      expect(told[0].subject).to.equal('[Org leads-org] A lead did not reach your CRM');
      expect(told[0].text).to.contain(
        `A visitor left their details with Org leads-org, but the CRM (hubspot, ${crm.url}/crm/v3/objects/contacts) did not take them: the platform gave up at 2026-11-22 10:00 UTC after ${MAX_ATTEMPTS} attempts; the last: the CRM answered HTTP 500 (its answer is in the lead's crm.last_error).`,
      );
      expect(told[0].text).to.contain(`The lead is kept: GET /api/v1/tenant/leads?crm_status=failed (its id: ${exhausted[0].id}).`);
      expect(told[0].text).to.contain('Turn them off for yourself: PATCH /api/v1/me/notifications {"crm_failures": false}.');
      expect(told[0].text).not.to.contain('busy@example.com');
      expect(told[0].text).not.to.contain('Contact already exists');
    });

    it('puts every lead event in the organization’s audit log, with its actor', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['LeadCaptured', 'LeadCrmDeliveryRequested', 'LeadCrmAttemptStarted', 'LeadSentToCrm', 'LeadCrmDeliveryFailed', 'LeadCrmDeliveryAbandoned', 'LeadDeleted']);
    });
  });

  /** Whether the CRM delivery saga's checkpoint has passed `position`. */
  async function sagaPast(position: number): Promise<boolean> {
    const state = await server.platform.readStore.getProjectionState(`saga:${SagaRunner.groupOf({ name: LEAD_CRM_DELIVERY, version: 1 })}`);
    return (state?.checkpoint ?? 0) >= position;
  }
});

describe('widget leads: the budget of one client address', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', WIDGET_LEADS_PER_HOUR: '100', WIDGET_LEADS_PER_IP_PER_HOUR: '2' });
  });
  after(() => server.close());

  it('answers 429 past WIDGET_LEADS_PER_IP_PER_HOUR leads from one address, whatever visitor ids it sends', async () => {
    const owner = await registerOwner(server, 'leads-ip-org');
    const { token } = await widgetOf(server, owner);
    const leave = () => server.request('POST', '/api/v1/widget/leads', { headers: asVisitor(token, newVisitorId()), body: { email: 'spam@example.com' } });
    expect((await leave()).status).to.equal(201);
    expect((await leave()).status).to.equal(201);
    const refused = await leave();
    expect([refused.status, refused.json.code]).to.deep.equal([429, 'rate_limited']);
    expect(refused.headers.get('retry-after')).to.not.equal(null);
  });
});
