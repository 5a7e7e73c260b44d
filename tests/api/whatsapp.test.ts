// The WhatsApp channel (spec 4.14, 4.16) with Meta's payload format: the super admin's
// configuration routes; the webhook's subscription handshake; signed deliveries (a missing or
// wrong signature records nothing); each text message a turn of the sender's conversation,
// answered in the background; one turn and one reply however often (and however parallel) a
// message is delivered; notices for what is not text and for a used-up quota; tenants without
// the feature, switched off or suspended acknowledged and dropped; replies kept in the embedded
// outbox without an access token, and sent through the Cloud API (a local server speaking its
// wire format) with one, retried, given up, and followed by Meta's status callbacks; secrets
// never answered, logged or recorded in clear; every event audited with its actor.
//
// Time is the platform's clock, moved by hand; the due passes of retries are run by hand (the
// background ones are held off), and the background turn is awaited through what it records.

import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { suspendTenant } from '../../application/tenant/tenant-commands';
import { DOCUMENT_NOT_READ_NOTICE, FAILED_NOTICE, ONLY_TEXT_NOTICE, UNAVAILABLE_NOTICE, VOICE_NOT_HEARD_NOTICE, WHATSAPP_INBOUND } from '../../application/whatsapp/inbound-messages';
import { WHATSAPP_REPLIES_SAGA } from '../../application/whatsapp/reply-delivery';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import { conversationStream } from '../../domain/conversation/conversation';
import { whatsappMessageStream } from '../../domain/whatsapp-message/whatsapp-message';
import { whatsappReplyStream } from '../../domain/whatsapp-reply/whatsapp-reply';
import { createLogger } from '../../infrastructure/logging/logger';
import { AUDIT_LOG } from '../../projections/audit-log';
import { CONVERSATIONS } from '../../projections/conversations';
import { expectEveryEventAudited } from '../support/audit';
import { userContext } from '../support/context';
import { type GraphApiServer, startGraphApi } from '../support/graph-api';
import { OpenAiAudioServer } from '../support/openai-audio-server';
import { type Account, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type Sent, metaPayload as payload, signed } from '../support/whatsapp';
import { pdfOf } from '../support/documents';

const ADMIN = { email: 'root@whatsapp.test', password: 'root password 123' };
const MAX_ATTEMPTS = 3;
const WAIT_MS = 15_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Channel {
  account: Account;
  phone_number_id: string;
  display: string;
  verify_token: string;
  app_secret: string;
  access_token?: string;
}

describe('the WhatsApp channel (spec 4.14)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let graph: GraphApiServer;
  let audio: OpenAiAudioServer;
  let adminToken: string;
  /** Every line the platform logged. */
  const logged: string[] = [];
  /** Every secret given: none may show up in clear anywhere. */
  const secrets: string[] = [];
  let outbox: Channel;
  let cloud: Channel;
  let wamids = 0;
  const wamid = (): string => `wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQzQTM${String((wamids += 1)).padStart(4, '0')}`;

  const asAdmin = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${adminToken}`, ...extra });
  const getConfig = (tenantId: string) => server.request('GET', `/api/v1/admin/whatsapp/config?tenant_id=${tenantId}`, { headers: asAdmin() });
  const putConfig = (tenantId: string, body: unknown, extra: Record<string, string> = {}) =>
    server.request('PUT', `/api/v1/admin/whatsapp/config?tenant_id=${tenantId}`, { headers: asAdmin(extra), body });

  /** POSTs a delivery signed with `secret` (or with the signature given, or none). */
  function deliver(body: Json, signature: { secret: string } | { header: string } | null): Promise<TestResponse> {
    const raw = typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature && 'secret' in signature) headers['x-hub-signature-256'] = signed(signature.secret, raw);
    if (signature && 'header' in signature) headers['x-hub-signature-256'] = signature.header;
    return server.request('POST', '/api/v1/whatsapp/webhook', { rawBody: raw, headers });
  }
  const deliverTo = (channel: Channel, messages: Sent[], statuses: Json[] = []) => deliver(payload(channel, messages, statuses), { secret: channel.app_secret });

  async function outboxItems(query = ''): Promise<Json[]> {
    const response = await server.request('GET', `/api/v1/admin/whatsapp/outbox${query}`, { headers: asAdmin() });
    expect(response.status, response.text).to.equal(200);
    return response.json.items;
  }

  const inboundId = (channel: Channel, id: string): string => server.platform.ids.fromKey(`whatsappMessage:${channel.account.tenant_id}:${id}`);

  /** The message's recorded outcome, once the background turn has handled it. */
  async function handled(channel: Channel, id: string): Promise<Json> {
    const stream = whatsappMessageStream(inboundId(channel, id));
    let outcome: Json = null;
    await eventually(async () => {
      const events = await server.platform.eventStore.readStream(stream);
      outcome = events.find((event) => event.type === 'WhatsAppMessageHandled')?.data ?? null;
      return outcome !== null;
    }, WAIT_MS, `the outcome of ${id}`);
    return outcome;
  }

  /** The reply to the message, once its delivery is settled (kept, sent or given up) and listed. */
  async function settledReply(channel: Channel, id: string, settled: readonly string[] = ['kept', 'sent', 'failed']): Promise<Json> {
    const outcome = await handled(channel, id);
    expect(outcome.reply_id, JSON.stringify(outcome)).to.be.a('string');
    let reply: Json = null;
    await eventually(async () => {
      reply = (await outboxItems(`?tenant_id=${channel.account.tenant_id}&limit=1000`)).find((item) => item.id === outcome.reply_id) ?? null;
      return reply !== null && settled.includes(reply.status);
    }, WAIT_MS, `the reply to ${id}`);
    return reply;
  }

  /** What the platform recorded before party ids were digests, for a sender of `outbox`: a conversation started by `whatsapp:<number>`, no contact. */
  async function legacyConversationOf(number: string): Promise<{ conversationId: string; legacy: { kind: 'end_user'; id: string } }> {
    const tenantId = outbox.account.tenant_id;
    const senderKey = server.platform.secrets.digest(`whatsapp-sender\u0000${tenantId}\u0000whatsapp:${number}`);
    const conversationId = server.platform.ids.fromKey(`whatsappConversation:${senderKey}:0`);
    const legacy = { kind: 'end_user' as const, id: `whatsapp:${number}` };
    await server.platform.eventStore.appendToStream(conversationStream(conversationId), [
      {
        id: server.platform.ids.newId(),
        type: 'ConversationStarted',
        data: { conversation_id: conversationId, tenant_id: tenantId, workspace_id: null, channel: 'whatsapp', title: 'Hello', started_by: legacy, started_at: clock.now().toISOString() },
        metadata: { tenant_id: tenantId, actor: legacy, request_id: null, correlation_id: server.platform.ids.newId(), causation_id: null, occurred_at: clock.now().toISOString(), ip: null },
      },
    ]);
    return { conversationId, legacy };
  }

  async function configured(slug: string, plan: 'growth' | 'premium' | null, options: { access_token?: string } = {}): Promise<Channel> {
    const account = await registerOwner(server, slug);
    if (plan) await subscribeTo(server, account.tenant_id, plan);
    const n = String(100000000000000 + secrets.length);
    const channel: Channel = {
      account,
      phone_number_id: n,
      display: `1555${n.slice(-7)}`,
      verify_token: `verify-${slug}-0123456789`,
      app_secret: createHmac('sha256', slug).update('app secret').digest('hex').slice(0, 32),
      ...options,
    };
    secrets.push(channel.verify_token, channel.app_secret, ...(options.access_token ? [options.access_token] : []));
    const response = await putConfig(account.tenant_id, {
      phone_number_id: channel.phone_number_id,
      display_phone_number: `+${channel.display}`,
      verify_token: channel.verify_token,
      app_secret: channel.app_secret,
      ...(options.access_token ? { access_token: options.access_token } : {}),
    });
    expect(response.status, response.text).to.equal(200);
    return channel;
  }

  before(async () => {
    clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
    graph = await startGraphApi();
    audio = await OpenAiAudioServer.start();
    const logger = createLogger('debug', { write: (line: string) => void logged.push(line) });
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        SUPER_ADMIN_EMAIL: ADMIN.email,
        SUPER_ADMIN_PASSWORD: ADMIN.password,
        WHATSAPP_GRAPH_BASE_URL: graph.url,
        WHATSAPP_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        WHATSAPP_RETRY_BASE_SECONDS: '1',
        SPEECH_BASE_URL: audio.baseUrl,
        SPEECH_API_KEY: 'sk-platform-speech',
      },
      { clock, logger, sagaRetryPollMs: 3_600_000 },
    );
    adminToken = (await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token;
    outbox = await configured('wa-outbox', 'growth');
    cloud = await configured('wa-cloud', 'premium', { access_token: 'EAAJB0cloudapitoken0123456789abcdef' });
  });
  after(async () => {
    await server.close();
    await graph.close();
    await audio.close();
  });

  describe('configuration by the super admin (GET, PUT /admin/whatsapp/config, GET /admin/whatsapp/configs)', () => {
    let tenant: Account;
    before(async () => {
      tenant = await registerOwner(server, 'wa-config');
    });

    it('is 401 without a token and with a tenant token, recording nothing', async () => {
      for (const headers of [{}, { authorization: `Bearer ${tenant.token}` }] as Array<Record<string, string>>) {
        for (const [method, path, body] of [
          ['GET', `/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`],
          ['PUT', `/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { enabled: false }],
          ['GET', '/api/v1/admin/whatsapp/configs'],
          ['GET', '/api/v1/admin/whatsapp/outbox'],
        ] as Array<[string, string, unknown?]>) {
          const refused = await server.request(method, path, { headers, body });
          expect(refused.status, `${method} ${path}`).to.equal(401);
          expect(await refused.events()).to.deep.equal([]);
        }
      }
    });

    it('answers a tenant without a configuration as not configured, and 404 for an unknown tenant', async () => {
      const read = await getConfig(tenant.tenant_id);
      expect(read.status).to.equal(200);
      expect(read.headers.get('etag')).to.equal('"-1"');
      expect(read.json).to.deep.equal({
        tenant_id: tenant.tenant_id,
        configured: false,
        phone_number_id: null,
        display_phone_number: null,
        has_verify_token: false,
        has_app_secret: false,
        has_access_token: false,
        enabled: false,
        graph_api_version: null,
        workspace_id: null,
        replies_via: 'outbox',
        updated_at: null,
        updated_by: null,
      });
      const unknown = await getConfig('no-such-tenant');
      expect([unknown.status, unknown.json.code]).to.deep.equal([404, 'tenant_not_found']);
      const refused = await putConfig('no-such-tenant', { phone_number_id: '1', verify_token: 'verify-0123456789', app_secret: 'a'.repeat(32) });
      expect([refused.status, refused.json.code]).to.deep.equal([404, 'tenant_not_found']);
      expect(await refused.events()).to.deep.equal([]);
    });

    it('answers 400 naming each bad field, recording nothing', async () => {
      const good = { phone_number_id: '200000000000001', verify_token: 'verify-token-0123', app_secret: 'b'.repeat(32) };
      const cases: Array<[string, Json, string, string]> = [
        ['/api/v1/admin/whatsapp/config', good, 'invalid_request', 'tenant_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, phone_number_id: 'abc' }, 'invalid_whatsapp_config', 'phone_number_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, phone_number_id: 200000000000001 }, 'invalid_request', 'phone_number_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, display_phone_number: 'call me maybe' }, 'invalid_whatsapp_config', 'display_phone_number'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, verify_token: 'short' }, 'invalid_whatsapp_config', 'verify_token'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, app_secret: 'with spaces in the secret 0123' }, 'invalid_whatsapp_config', 'app_secret'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, access_token: 'short' }, 'invalid_whatsapp_config', 'access_token'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, enabled: 'yes' }, 'invalid_request', 'enabled'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, graph_api_version: '21' }, 'invalid_whatsapp_config', 'graph_api_version'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, workspace_id: 'no-such-workspace' }, 'invalid_whatsapp_config', 'workspace_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { ...good, workspace_id: 7 }, 'invalid_request', 'workspace_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { verify_token: good.verify_token, app_secret: good.app_secret }, 'invalid_whatsapp_config', 'phone_number_id'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { phone_number_id: good.phone_number_id, app_secret: good.app_secret }, 'invalid_whatsapp_config', 'verify_token'],
        [`/api/v1/admin/whatsapp/config?tenant_id=${tenant.tenant_id}`, { phone_number_id: good.phone_number_id, verify_token: good.verify_token }, 'invalid_whatsapp_config', 'app_secret'],
      ];
      for (const [path, body, code, field] of cases) {
        const refused = await server.request('PUT', path, { headers: asAdmin(), body });
        expect([refused.status, refused.json.code, refused.json.field], `${JSON.stringify(body)}: ${refused.text}`).to.deep.equal([400, code, field]);
        expect(await refused.events()).to.deep.equal([]);
      }
      expect((await getConfig(tenant.tenant_id)).json.configured).to.equal(false);
    });

    it('sets the channel, claiming the number, with the secrets sealed and answered only as present', async () => {
      const appSecret = 'c0ffee00c0ffee00c0ffee00c0ffee00';
      const accessToken = 'EAAJB0configtoken0123456789abcdefgh';
      secrets.push(appSecret, accessToken, 'verify-config-0123');
      const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: { authorization: `Bearer ${tenant.token}` } })).json.items[0].id;
      const response = await putConfig(tenant.tenant_id, {
        phone_number_id: '200000000000001',
        display_phone_number: '+1 555 0100',
        verify_token: 'verify-config-0123',
        app_secret: appSecret,
        access_token: accessToken,
        workspace_id: workspaceId,
      });
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"0"');
      expect(response.json).to.deep.equal({
        tenant_id: tenant.tenant_id,
        configured: true,
        phone_number_id: '200000000000001',
        display_phone_number: '+1 555 0100',
        has_verify_token: true,
        has_app_secret: true,
        has_access_token: true,
        enabled: true,
        graph_api_version: 'v23.0',
        workspace_id: workspaceId,
        replies_via: 'cloud_api',
        updated_at: clock.now().toISOString(),
        updated_by: { kind: 'admin', id: response.json.updated_by.id },
      });
      expect(await response.events()).to.deep.equal(['ReservationClaimed@reservation', 'WhatsAppConfigured@whatsappConfig']);
      const [event] = await server.platform.eventStore.readStream(`whatsappConfig-${tenant.tenant_id}`);
      const data = event.data as Json;
      expect(server.platform.secrets.open(data.app_secret_sealed)).to.equal(appSecret);
      expect(server.platform.secrets.open(data.access_token_sealed)).to.equal(accessToken);
      expect(data.changed).to.have.members(['phone_number_id', 'display_phone_number', 'enabled', 'graph_api_version', 'workspace_id', 'verify_token', 'app_secret', 'access_token']);
      expect(event.metadata).to.deep.include({ tenant_id: tenant.tenant_id, actor: { kind: 'admin', id: response.json.updated_by.id } });
      const read = await getConfig(tenant.tenant_id);
      expect(read.json).to.deep.equal(response.json);
      expect(read.headers.get('etag')).to.equal('"0"');
    });

    it('keeps what a change leaves out, records nothing for the same configuration, and honours If-Match', async () => {
      const same = await putConfig(tenant.tenant_id, { phone_number_id: '200000000000001', display_phone_number: '+1 555 0100' });
      expect(same.status).to.equal(200);
      expect(same.json).to.include({ has_access_token: true, has_app_secret: true, enabled: true });
      expect(await same.events()).to.deep.equal([]);
      const stale = await putConfig(tenant.tenant_id, { enabled: false }, { 'if-match': '"7"' });
      expect([stale.status, stale.json.code]).to.deep.equal([412, 'revision_mismatch']);
      expect(await stale.events()).to.deep.equal([]);
      const off = await putConfig(tenant.tenant_id, { enabled: false, access_token: null, workspace_id: null }, { 'if-match': '"0"' });
      expect(off.status, off.text).to.equal(200);
      expect(off.json).to.include({ enabled: false, has_access_token: false, workspace_id: null, replies_via: 'outbox' });
      expect(off.headers.get('etag')).to.equal('"1"');
      const [, changed] = await server.platform.eventStore.readStream(`whatsappConfig-${tenant.tenant_id}`);
      expect((changed.data as Json).changed).to.have.members(['enabled', 'workspace_id', 'access_token']);
      expect((changed.data as Json).access_token_sealed).to.equal(null);
    });

    it('refuses a number another tenant has with 409, and frees a number its tenant moved away from', async () => {
      const other = await registerOwner(server, 'wa-config-other');
      const body = { phone_number_id: '200000000000001', verify_token: 'verify-other-0123', app_secret: 'd'.repeat(32) };
      const taken = await putConfig(other.tenant_id, body);
      expect([taken.status, taken.json.code]).to.deep.equal([409, 'whatsapp_phone_number_id_taken']);
      expect(await taken.events()).to.deep.equal([]);
      expect((await getConfig(other.tenant_id)).json.configured).to.equal(false);

      const moved = await putConfig(tenant.tenant_id, { phone_number_id: '200000000000002' });
      expect(moved.status).to.equal(200);
      expect(await moved.events()).to.deep.equal(['ReservationClaimed@reservation', 'WhatsAppConfigured@whatsappConfig', 'ReservationReleased@reservation']);
      const freed = await putConfig(other.tenant_id, body);
      expect(freed.status, freed.text).to.equal(200);
      expect(freed.json.phone_number_id).to.equal('200000000000001');
    });

    it('lists every configuration, most recently changed first, filtered by enabled and paged', async () => {
      const all = await server.request('GET', '/api/v1/admin/whatsapp/configs?limit=1000', { headers: asAdmin() });
      expect(all.status).to.equal(200);
      expect(all.json.items.map((item: Json) => item.tenant_id)).to.include.members([outbox.account.tenant_id, cloud.account.tenant_id, tenant.tenant_id]);
      expect(all.json.items.every((item: Json) => item.configured)).to.equal(true);
      const off = await server.request('GET', '/api/v1/admin/whatsapp/configs?enabled=false', { headers: asAdmin() });
      expect(off.json.items.map((item: Json) => item.tenant_id)).to.deep.equal([tenant.tenant_id]);
      const first = await server.request('GET', '/api/v1/admin/whatsapp/configs?limit=1', { headers: asAdmin() });
      expect(first.json.items).to.have.length(1);
      expect(first.json.next_cursor).to.be.a('string');
      const second = await server.request('GET', `/api/v1/admin/whatsapp/configs?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`, { headers: asAdmin() });
      expect(second.json.items[0].tenant_id).to.not.equal(first.json.items[0].tenant_id);
      for (const [query, field] of [['?enabled=maybe', 'enabled'], ['?limit=0', 'limit']]) {
        const refused = await server.request('GET', `/api/v1/admin/whatsapp/configs${query}`, { headers: asAdmin() });
        expect([refused.status, refused.json.field]).to.deep.equal([400, field]);
      }
      for (const [query, field] of [['?status=lost', 'status'], ['?limit=x', 'limit']]) {
        const refused = await server.request('GET', `/api/v1/admin/whatsapp/outbox${query}`, { headers: asAdmin() });
        expect([refused.status, refused.json.field]).to.deep.equal([400, field]);
      }
    });
  });

  describe("Meta's subscription handshake (GET /whatsapp/webhook)", () => {
    it('answers the challenge as text when the verify token is a tenant’s', async () => {
      const response = await server.request('GET', `/api/v1/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${outbox.verify_token}&hub.challenge=1158201444`);
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      expect(response.text).to.equal('1158201444');
      expect(await response.events()).to.deep.equal([]);
    });

    it('is 403 for a wrong token or mode, and 400 without a challenge', async () => {
      for (const query of [
        'hub.mode=subscribe&hub.verify_token=not-the-token-at-all&hub.challenge=1158201444',
        `hub.mode=unsubscribe&hub.verify_token=${outbox.verify_token}&hub.challenge=1158201444`,
        'hub.mode=subscribe&hub.challenge=1158201444',
      ]) {
        const refused = await server.request('GET', `/api/v1/whatsapp/webhook?${query}`);
        expect([refused.status, refused.json.code], query).to.deep.equal([403, 'verification_failed']);
        expect(refused.text).to.not.include('1158201444');
      }
      const missing = await server.request('GET', `/api/v1/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=${outbox.verify_token}`);
      expect([missing.status, missing.json.field]).to.deep.equal([400, 'hub.challenge']);
    });
  });

  describe('deliveries (POST /whatsapp/webhook)', () => {
    it('answers a text message in the background: a turn of the sender’s conversation, the answer kept in the outbox', async () => {
      const id = wamid();
      const response = await deliverTo(outbox, [{ from: '16505551234', id, text: 'Does it come in another color?', name: 'Sheena Nelson' }]);
      expect(response.status, response.text).to.equal(200);
      expect(response.json).to.deep.equal({ received: true, messages: 1, duplicates: 0, statuses: 0, ignored: 0 });
      expect(await response.events()).to.deep.equal(['WhatsAppMessageReceived@whatsappMessage']);
      const [received] = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, id)));
      expect(received.data).to.deep.include({ tenant_id: outbox.account.tenant_id, wamid: id, phone_number_id: outbox.phone_number_id, from: '16505551234', profile_name: 'Sheena Nelson', type: 'text', text: 'Does it come in another color?' });
      // The sender is a party by a digest of their number, never by the number itself.
      const sender = { kind: 'end_user', id: received.metadata.actor.id };
      expect(sender.id).to.match(/^whatsapp:[0-9a-f]{32}$/);
      expect(received.metadata).to.deep.include({ tenant_id: outbox.account.tenant_id, actor: sender });

      const reply = await settledReply(outbox, id);
      const outcome = await handled(outbox, id);
      expect(outcome).to.deep.include({ outcome: 'answered', detail: null });
      const conversation = await server.platform.eventStore.readStream(conversationStream(outcome.conversation_id));
      expect(conversation.map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
      expect(conversation[0].data).to.deep.include({ tenant_id: outbox.account.tenant_id, channel: 'whatsapp', title: 'Does it come in another color?', started_by: sender, contact: '16505551234', contact_name: 'Sheena Nelson' });
      expect(conversation[0].metadata.actor).to.deep.equal(sender);
      expect(conversation[1].data).to.deep.include({ message_id: outcome.user_message_id, text: 'Does it come in another color?' });
      expect(conversation[1].metadata.actor).to.deep.equal(sender);
      const answer = (conversation[2].data as Json).text;
      expect(reply).to.deep.include({
        tenant_id: outbox.account.tenant_id,
        phone_number_id: outbox.phone_number_id,
        to: '16505551234',
        text: answer,
        kind: 'answer',
        conversation_id: outcome.conversation_id,
        in_reply_to: inboundId(outbox, id),
        status: 'kept',
        transport: 'outbox',
        provider_message_id: null,
        attempts: 1,
      });
      expect(graph.requests).to.deep.equal([]);
      const replyEvents = await server.platform.eventStore.readStream(whatsappReplyStream(reply.id));
      expect(replyEvents.map((event) => event.type)).to.deep.equal(['WhatsAppReplyQueued', 'WhatsAppReplyAttemptStarted', 'WhatsAppReplyKept']);
      expect(replyEvents[0].metadata.actor).to.deep.equal({ kind: 'system', id: WHATSAPP_INBOUND });
      expect(replyEvents[2].metadata.actor).to.deep.equal({ kind: 'system', id: WHATSAPP_REPLIES_SAGA });

      // The sender's next message continues the conversation; another sender has their own.
      const next = wamid();
      await deliverTo(outbox, [{ from: '16505551234', id: next, text: 'And in blue?' }]);
      expect((await handled(outbox, next)).conversation_id).to.equal(outcome.conversation_id);
      const stranger = wamid();
      await deliverTo(outbox, [{ from: '447700900123', id: stranger, text: 'Hi there' }]);
      const theirs = await handled(outbox, stranger);
      expect(theirs.outcome).to.equal('answered');
      expect(theirs.conversation_id).to.not.equal(outcome.conversation_id);
      const listed = async (): Promise<string[]> =>
        (await server.request('GET', '/api/v1/conversations?channel=whatsapp', { headers: { authorization: `Bearer ${outbox.account.token}` } })).json.items.map((item: Json) => item.id);
      await eventually(async () => (await listed()).length === 2, WAIT_MS, 'both conversations listed');
      expect(await listed()).to.have.members([outcome.conversation_id, theirs.conversation_id]);
      // The console shows whom to reach: the number and the profile name, as the conversation's contact.
      const shown = await server.request('GET', `/api/v1/conversations/${outcome.conversation_id}`, { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(shown.json).to.deep.include({ channel: 'whatsapp', started_by: sender, contact: { address: '16505551234', name: 'Sheena Nelson' } });
    });

    it('keeps the sender’s number out of every id and in clear in no stored event: a party of its own in each organization', async () => {
      const number = '16505557788';
      const inOutbox = wamid();
      const inOther = wamid();
      const other = await configured('wa-other', 'growth');
      await deliverTo(outbox, [{ from: number, id: inOutbox, text: 'Is the shop open on Sunday?' }]);
      await deliverTo(other, [{ from: number, id: inOther, text: 'Is the shop open on Sunday?' }]);
      const first = await handled(outbox, inOutbox);
      const second = await handled(other, inOther);
      const starterOf = async (conversationId: string): Promise<Json> => (await server.platform.eventStore.readStream(conversationStream(conversationId)))[0].data;
      const [here, there] = [await starterOf(first.conversation_id), await starterOf(second.conversation_id)];
      expect(here.contact).to.equal(number);
      expect(there.contact).to.equal(number);
      expect(here.started_by.id).to.not.equal(there.started_by.id);

      const stored = JSON.stringify([
        ...(await server.platform.storedEvents.readStream(conversationStream(first.conversation_id))),
        ...(await server.platform.storedEvents.readStream(whatsappMessageStream(inboundId(outbox, inOutbox)))),
      ]);
      expect(stored).to.include(here.started_by.id);
      expect(stored).to.not.include(number);
      const audit = await server.request('GET', `/api/v1/org/audit-logs?limit=200`, { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(audit.status, audit.text).to.equal(200);
      expect(audit.text).to.include(here.started_by.id);
      expect(audit.text).to.not.include(number);
    });

    it('goes on with a conversation its sender started when their number was their party id, and replies to it', async () => {
      const number = '16505556600';
      const tenantId = outbox.account.tenant_id;
      const { conversationId, legacy } = await legacyConversationOf(number);
      const id = wamid();
      await deliverTo(outbox, [{ from: number, id, text: 'Me again' }]);
      const outcome = await handled(outbox, id);
      expect(outcome).to.deep.include({ outcome: 'answered', conversation_id: conversationId });
      const events = await server.platform.eventStore.readStream(conversationStream(conversationId));
      expect(events.filter((event) => event.type === 'UserMessagePosted').map((event) => event.metadata.actor)).to.deep.equal([legacy]);

      const asOwner = { authorization: `Bearer ${outbox.account.token}` };
      let shown: TestResponse | null = null;
      await eventually(async () => {
        shown = await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: asOwner });
        return shown.status === 200 && shown.json.message_count === 2;
      }, WAIT_MS, 'the conversation listed');
      expect(shown!.json).to.deep.include({ started_by: legacy, contact: { address: number, name: null } });
      const posted = await server.request('POST', `/api/v1/conversations/${conversationId}/messages`, { headers: asOwner, body: { text: 'Welcome back!' } });
      expect(posted.status, posted.text).to.equal(201);
      await eventually(
        async () => (await outboxItems(`?tenant_id=${tenantId}&limit=1000`)).some((item) => item.kind === 'agent_reply' && item.conversation_id === conversationId && item.to === number),
        WAIT_MS,
        'the agent reply queued to the number',
      );
    });

    it('records a message delivered again, or ten times at once, once: one turn, one reply', async () => {
      const again = wamid();
      const body = payload(outbox, [{ from: '16505550001', id: again, text: 'Where is my order?' }]);
      const first = await deliver(body, { secret: outbox.app_secret });
      const second = await deliver(body, { secret: outbox.app_secret });
      expect(first.json).to.include({ messages: 1, duplicates: 0 });
      expect(second.json).to.include({ messages: 0, duplicates: 1 });
      expect(await second.events()).to.deep.equal([]);

      const parallel = wamid();
      const burst = payload(outbox, [{ from: '16505550002', id: parallel, text: 'Can I pay by card?' }]);
      const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(burst, { secret: outbox.app_secret })));
      expect(answers.map((answer) => answer.status)).to.deep.equal(Array(10).fill(200));
      expect(answers.reduce((sum, answer) => sum + answer.json.messages, 0)).to.equal(1);
      expect(answers.reduce((sum, answer) => sum + answer.json.duplicates, 0)).to.equal(9);
      // Twice in one delivery: recorded once, the other counted as a duplicate.
      const twice = wamid();
      const doubled = await deliver(payload(outbox, [{ from: '16505550003', id: twice, text: 'Open on Sunday?' }, { from: '16505550003', id: twice, text: 'Open on Sunday?' }]), { secret: outbox.app_secret });
      expect(doubled.status, doubled.text).to.equal(200);
      expect(doubled.json).to.include({ messages: 1, duplicates: 1 });

      for (const id of [again, parallel, twice]) {
        const received = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, id)));
        expect(received.filter((event) => event.type === 'WhatsAppMessageReceived')).to.have.length(1);
        const reply = await settledReply(outbox, id);
        const outcome = await handled(outbox, id);
        const turns = (await server.platform.eventStore.readStream(conversationStream(outcome.conversation_id))).filter((event) => event.type === 'UserMessagePosted');
        expect(turns).to.have.length(1);
        expect((await outboxItems(`?tenant_id=${outbox.account.tenant_id}&limit=1000`)).filter((item) => item.in_reply_to === inboundId(outbox, id))).to.deep.equal([reply]);
      }
    });

    it('sends a person’s reply in the conversation to the sender; once handed off the assistant stays quiet', async () => {
      const id = wamid();
      await deliverTo(outbox, [{ from: '16505550010', id, text: 'I would like to talk to a person' }]);
      const { conversation_id } = await handled(outbox, id);
      const asOwner = { authorization: `Bearer ${outbox.account.token}` };
      const posted = await server.request('POST', `/api/v1/conversations/${conversation_id}/messages`, { headers: asOwner, body: { text: 'Hi, this is Sam from support.' } });
      expect(posted.status, posted.text).to.equal(201);
      let reply: Json = null;
      await eventually(async () => {
        reply = (await outboxItems(`?tenant_id=${outbox.account.tenant_id}&limit=1000`)).find((item) => item.kind === 'agent_reply' && item.conversation_id === conversation_id) ?? null;
        return reply?.status === 'kept';
      }, WAIT_MS, 'the person’s reply kept');
      expect(reply).to.deep.include({ to: '16505550010', text: 'Hi, this is Sam from support.', in_reply_to: null, phone_number_id: outbox.phone_number_id });
      const [queued] = await server.platform.eventStore.readStream(whatsappReplyStream(reply.id));
      expect(queued.metadata.actor).to.deep.equal({ kind: 'system', id: 'whatsapp_conversation_replies' });

      const later = wamid();
      await deliverTo(outbox, [{ from: '16505550010', id: later, text: 'Thanks Sam!' }]);
      expect(await handled(outbox, later)).to.deep.include({ outcome: 'paused', detail: 'handed_off', conversation_id, reply_id: null });
      const conversation = await server.platform.eventStore.readStream(conversationStream(conversation_id));
      expect(conversation.filter((event) => event.type === 'UserMessagePosted').map((event) => (event.data as Json).text)).to.deep.equal(['I would like to talk to a person', 'Thanks Sam!']);
      expect(conversation.filter((event) => event.type === 'AssistantAnswered')).to.have.length(1);
    });

    it('tells a sender who sends no text that only text is understood, and answers a reaction with nothing', async () => {
      const image = wamid();
      const reaction = wamid();
      await deliverTo(outbox, [
        { from: '16505550003', id: image, type: 'image' },
        { from: '16505550003', id: reaction, type: 'reaction' },
      ]);
      const reply = await settledReply(outbox, image);
      expect(reply).to.deep.include({ text: ONLY_TEXT_NOTICE, kind: 'notice', conversation_id: null, status: 'kept' });
      expect(await handled(outbox, image)).to.deep.include({ outcome: 'unsupported_type', detail: 'type_image', conversation_id: null });
      expect(await handled(outbox, reaction)).to.deep.include({ outcome: 'ignored', detail: 'type_reaction', reply_id: null });
    });

    it('refuses a delivery without a signature or with a wrong one with 401, recording nothing', async () => {
      const body = payload(outbox, [{ from: '16505550004', id: wamid(), text: 'Sneaky' }]);
      for (const signature of [null, { header: 'sha256=' + '0'.repeat(64) }, { header: 'sha1=abc' }, { secret: 'the wrong app secret 0123456789' }, { secret: cloud.app_secret }]) {
        const refused = await deliver(body, signature);
        expect([refused.status, refused.json.code], JSON.stringify(signature)).to.deep.equal([401, 'invalid_signature']);
        expect(await refused.events()).to.deep.equal([]);
      }
      // Signed over other bytes than those sent: the same JSON, spaced differently.
      const raw = JSON.stringify(body);
      const spaced = JSON.stringify(body, null, 2);
      const replayed = await server.request('POST', '/api/v1/whatsapp/webhook', { rawBody: spaced, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signed(outbox.app_secret, raw) } });
      expect(replayed.status).to.equal(401);
      expect(await replayed.events()).to.deep.equal([]);
    });

    it('answers 400 naming the field for a body that is not Meta’s format', async () => {
      const cases: Array<[Json, string | undefined]> = [
        ['not json', undefined],
        [{ object: 'page', entry: [] }, 'object'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: outbox.phone_number_id }, messages: [{ from: 'someone', id: 'wamid.x', timestamp: '1', type: 'text', text: { body: 'x' } }] } }] }] }, 'entry.0.changes.0.value.messages.0.from'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: outbox.phone_number_id }, messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'text' }] } }] }] }, 'entry.0.changes.0.value.messages.0.text'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: outbox.phone_number_id }, messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'audio' }] } }] }] }, 'entry.0.changes.0.value.messages.0.audio'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: outbox.phone_number_id }, messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'document' }] } }] }] }, 'entry.0.changes.0.value.messages.0.document'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { phone_number_id: outbox.phone_number_id }, messages: [{ from: '1', id: 'wamid.x', timestamp: '1', type: 'document', document: { id: 'm1', caption: 5 } }] } }] }] }, 'entry.0.changes.0.value.messages.0.document.caption'],
        [{ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: {} } }] }] }, 'entry.0.changes.0.value.metadata.phone_number_id'],
      ];
      for (const [body, field] of cases) {
        const raw = typeof body === 'string' ? body : JSON.stringify(body);
        const refused = await deliver(raw, { secret: outbox.app_secret });
        expect([refused.status, refused.json.code, refused.json.field], raw).to.deep.equal([400, 'invalid_request', field]);
        expect(await refused.events()).to.deep.equal([]);
      }
      // Changes of other fields are acknowledged whatever their shape.
      const other = { object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } }] }] };
      const acknowledged = await deliver(other, { secret: outbox.app_secret });
      expect([acknowledged.status, acknowledged.json.ignored]).to.deep.equal([200, 1]);
    });

    it('acknowledges and drops a number no tenant configured, with a warning in the log', async () => {
      const unknown = { phone_number_id: '999999999999999', display: '15550000000' };
      const response = await deliver(payload(unknown, [{ from: '16505550005', id: wamid(), text: 'Anyone?' }]), { secret: 'whatever secret 0123456789abcdef' });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({ received: true, messages: 0, duplicates: 0, statuses: 0, ignored: 1 });
      expect(await response.events()).to.deep.equal([]);
      expect(logged.some((line) => line.includes('999999999999999') && line.includes('no organization configured'))).to.equal(true);
    });

    it('acknowledges and drops the messages of a tenant without the whatsapp feature, switched off, or suspended', async () => {
      const free = await configured('wa-free', null);
      const response = await deliverTo(free, [{ from: '16505550006', id: wamid(), text: 'Hello?' }]);
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ messages: 0, ignored: 1 });
      expect(await response.events()).to.deep.equal([]);
      expect(logged.some((line) => line.includes(free.account.tenant_id) && line.includes('feature_not_in_plan'))).to.equal(true);

      const off = await configured('wa-off', 'growth');
      await putConfig(off.account.tenant_id, { enabled: false });
      const dropped = await deliverTo(off, [{ from: '16505550007', id: wamid(), text: 'Hello?' }]);
      expect([dropped.status, dropped.json.ignored]).to.deep.equal([200, 1]);
      expect(await dropped.events()).to.deep.equal([]);

      const suspended = await configured('wa-suspended', 'growth');
      const result = await suspendTenant(server.platform.commands, suspended.account.tenant_id, 'unpaid invoices', userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: suspended.account.tenant_id }));
      await server.platform.readYourWrites(result.position);
      const quiet = await deliverTo(suspended, [{ from: '16505550008', id: wamid(), text: 'Hello?' }]);
      expect([quiet.status, quiet.json.ignored]).to.deep.equal([200, 1]);
      expect(await quiet.events()).to.deep.equal([]);
      const outboxTenants = (await outboxItems('?limit=1000')).map((item) => item.tenant_id);
      for (const channel of [free, off, suspended]) expect(outboxTenants).to.not.include(channel.account.tenant_id);
    });

    it('tells the sender the assistant is unavailable when the message quota is used up, without a turn', async () => {
      const capped = await configured('wa-capped', 'growth');
      await setQuotaOverrides(server.platform.identity, 'test-admin', capped.account.tenant_id, { overrides: { messages_per_month: 0 }, reason: 'test' }, systemContext('test'));
      const id = wamid();
      await deliverTo(capped, [{ from: '16505550009', id, text: 'Are you there?' }]);
      const reply = await settledReply(capped, id);
      expect(reply).to.deep.include({ text: UNAVAILABLE_NOTICE, kind: 'notice', status: 'kept' });
      expect(await handled(capped, id)).to.deep.include({ outcome: 'over_quota', detail: 'quota_exceeded', conversation_id: null });
      expect(FAILED_NOTICE).to.not.equal(UNAVAILABLE_NOTICE);
    });
  });

  describe('replies through the WhatsApp Cloud API', () => {
    it('sends the answer with the tenant’s token to its number, and records Meta’s message id', async () => {
      const id = wamid();
      await deliverTo(cloud, [{ from: '16505551000', id, text: 'What are your opening hours?' }]);
      const reply = await settledReply(cloud, id);
      expect(reply).to.deep.include({ status: 'sent', transport: 'cloud_api', provider_message_id: 'wamid.OUT-1', last_status_code: 200, attempts: 1, to: '16505551000' });
      expect(graph.requests).to.have.length(1);
      const [sent] = graph.requests;
      expect(sent.method).to.equal('POST');
      expect(sent.path).to.equal(`/v23.0/${cloud.phone_number_id}/messages`);
      expect(sent.headers.authorization).to.equal(`Bearer ${cloud.access_token}`);
      expect(sent.headers['content-type']).to.equal('application/json');
      expect(JSON.parse(sent.body.toString('utf8'))).to.deep.equal({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: '16505551000',
        type: 'text',
        text: { preview_url: false, body: reply.text },
      });
    });

    it('records Meta’s status callbacks on the reply, each once, and drops those of messages it did not send', async () => {
      const [reply] = (await outboxItems(`?tenant_id=${cloud.account.tenant_id}&status=sent`)).filter((item) => item.provider_message_id === 'wamid.OUT-1');
      const status = (name: string, timestamp: string, extra: Json = {}) => ({ id: 'wamid.OUT-1', status: name, timestamp, recipient_id: '16505551000', ...extra });
      const delivered = await deliverTo(cloud, [], [status('sent', '1795860001'), status('delivered', '1795860002')]);
      expect(delivered.json).to.include({ statuses: 2, ignored: 0 });
      expect(await delivered.events()).to.deep.equal(['WhatsAppReplyStatusReported@whatsappReply', 'WhatsAppReplyStatusReported@whatsappReply']);
      const read = await deliverTo(cloud, [], [status('read', '1795860003'), status('delivered', '1795860002'), { ...status('read', '1795860004'), id: 'wamid.NOT-OURS' }]);
      expect(read.json).to.include({ statuses: 1, ignored: 2 });
      const events = await server.platform.eventStore.readStream(whatsappReplyStream(reply.id));
      const reported = events.filter((event) => event.type === 'WhatsAppReplyStatusReported');
      expect(reported.map((event) => (event.data as Json).status)).to.deep.equal(['sent', 'delivered', 'read']);
      expect(reported[2].data).to.deep.include({ reported_at: new Date(1795860003 * 1000).toISOString(), error: null });
      expect(reported[2].metadata.actor).to.deep.equal({ kind: 'system', id: 'whatsapp_cloud_api' });
      await eventually(async () => (await outboxItems(`?tenant_id=${cloud.account.tenant_id}`)).find((item) => item.id === reply.id)?.delivery_status === 'read', WAIT_MS, 'the reply read');
    });

    it('retries a reply the Cloud API could not take now, and gives up at once on a refusal a retry cannot change', async () => {
      graph.answerWith(503);
      const flaky = wamid();
      await deliverTo(cloud, [{ from: '16505551001', id: flaky, text: 'Do you ship abroad?' }]);
      const waiting = await settledReply(cloud, flaky, ['retrying']);
      expect(waiting).to.deep.include({ attempts: 1, last_status_code: 503, next_attempt_at: new Date(clock.now().getTime() + 1000).toISOString() });
      expect(waiting.last_error).to.include('HTTP 503').and.include('Service temporarily unavailable');
      clock.advance(1000);
      await server.platform.sagas.runDue();
      const sent = await settledReply(cloud, flaky, ['sent']);
      expect(sent).to.deep.include({ attempts: 2, last_error: null, provider_message_id: graph.sent[graph.sent.length - 1] });

      graph.answerWith(400);
      const refused = wamid();
      await deliverTo(cloud, [{ from: '16505551002', id: refused, text: 'Hello from abroad' }]);
      const failed = await settledReply(cloud, refused, ['failed']);
      expect(failed).to.deep.include({ attempts: 1, last_status_code: 400, status: 'failed' });
      expect(failed.last_error).to.include('131030');
      expect(failed.last_error).to.not.include(cloud.access_token!);
      const events = await server.platform.eventStore.readStream(whatsappReplyStream(failed.id));
      expect(events.map((event) => event.type)).to.deep.equal(['WhatsAppReplyQueued', 'WhatsAppReplyAttemptStarted', 'WhatsAppReplyAbandoned']);
    });

    it('gives a reply up after the last attempt', async () => {
      graph.answerWith(...Array(MAX_ATTEMPTS).fill(500));
      const id = wamid();
      await deliverTo(cloud, [{ from: '16505551003', id, text: 'Is anyone there?' }]);
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
        await eventually(async () => (await outboxItems(`?tenant_id=${cloud.account.tenant_id}&status=retrying`)).some((item) => item.attempts === attempt && item.in_reply_to === inboundId(cloud, id)), WAIT_MS, `attempt ${attempt} failed`);
        clock.advance(1000 * 2 ** (attempt - 1));
        await server.platform.sagas.runDue();
      }
      const failed = await settledReply(cloud, id, ['failed']);
      expect(failed).to.deep.include({ attempts: MAX_ATTEMPTS, last_status_code: 500 });
    });
  });

  describe('voice notes', () => {
    // A voice note as WhatsApp records one: Ogg Opus.
    const VOICE = Buffer.concat([Buffer.from('OggS\x00\x02', 'latin1'), Buffer.alloc(200, 7)]);

    it('listens to one: fetched from the Cloud API with the tenant’s token, transcribed, and answered as the sender’s question', async () => {
      graph.serveMedia('media-voice-1', VOICE, 'audio/ogg');
      audio.script({ text: ' Do you deliver on Sundays? ' });
      const heardBefore = audio.requests.length;
      const graphBefore = graph.requests.length;
      const id = wamid();
      await deliverTo(cloud, [{ from: '16505552001', id, type: 'audio', media_id: 'media-voice-1' }]);
      const [received] = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(cloud, id)));
      expect(received.data).to.deep.include({ type: 'audio', text: null, media_id: 'media-voice-1' });

      const reply = await settledReply(cloud, id);
      const outcome = await handled(cloud, id);
      expect(outcome).to.deep.include({ outcome: 'answered', detail: null });
      const conversation = await server.platform.eventStore.readStream(conversationStream(outcome.conversation_id));
      const asked = conversation.find((event) => event.type === 'UserMessagePosted');
      expect((asked?.data as Json).text).to.equal('Do you deliver on Sundays?');
      expect(reply).to.deep.include({ to: '16505552001', kind: 'answer', status: 'sent', transport: 'cloud_api' });

      const fetched = graph.requests.slice(graphBefore).filter((request) => request.method === 'GET');
      expect(fetched.map((request) => request.path)).to.deep.equal(['/v23.0/media-voice-1', '/media/media-voice-1']);
      for (const request of fetched) expect(request.headers.authorization).to.equal(`Bearer ${cloud.access_token}`);
      const [heard] = audio.requests.slice(heardBefore);
      expect(heard.file?.bytes.equals(VOICE)).to.equal(true);
      expect(heard.file?.type).to.equal('audio/ogg');
    });

    it('tells the sender it could not listen when the Cloud API has no such media, or the speech server fails', async () => {
      const gone = wamid();
      await deliverTo(cloud, [{ from: '16505552002', id: gone, type: 'audio', media_id: 'media-expired' }]);
      expect(await settledReply(cloud, gone)).to.deep.include({ text: VOICE_NOT_HEARD_NOTICE, kind: 'notice', conversation_id: null });
      expect(await handled(cloud, gone)).to.deep.include({ outcome: 'assistant_failed', detail: 'voice_not_fetched' });

      graph.serveMedia('media-voice-2', VOICE, 'audio/ogg');
      audio.script({ status: 500 });
      const failing = wamid();
      await deliverTo(cloud, [{ from: '16505552002', id: failing, type: 'audio', media_id: 'media-voice-2' }]);
      expect(await settledReply(cloud, failing)).to.deep.include({ text: VOICE_NOT_HEARD_NOTICE, kind: 'notice' });
      expect(await handled(cloud, failing)).to.deep.include({ outcome: 'assistant_failed', detail: 'voice_not_transcribed' });
    });

    it('tells a sender that only text is understood where voice notes cannot be fetched (no access token: the outbox)', async () => {
      const id = wamid();
      await deliverTo(outbox, [{ from: '16505552003', id, type: 'audio', media_id: 'media-voice-1' }]);
      expect(await settledReply(outbox, id)).to.deep.include({ text: ONLY_TEXT_NOTICE, kind: 'notice' });
      expect(await handled(outbox, id)).to.deep.include({ outcome: 'unsupported_type', detail: 'type_audio' });
    });
  });

  describe('documents', () => {
    it('reads one: fetched from the Cloud API with the tenant’s token, its caption, name and text the sender’s question, sealed in the log', async () => {
      graph.serveMedia('media-doc-1', pdfOf(['Invoice 4411 for Rosa Marquez', 'Total due: 129.90 EUR']), 'application/pdf');
      const graphBefore = graph.requests.length;
      const id = wamid();
      await deliverTo(cloud, [{ from: '16505553001', id, type: 'document', media_id: 'media-doc-1', filename: 'invoice-4411.pdf', caption: 'Is this total right?' }]);
      const [received] = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(cloud, id)));
      expect(received.data).to.deep.include({ type: 'document', text: null, media_id: 'media-doc-1', caption: 'Is this total right?', filename: 'invoice-4411.pdf' });
      const stored = JSON.stringify(await server.platform.storedEvents.readStream(whatsappMessageStream(inboundId(cloud, id))));
      for (const clear of ['Is this total right', 'invoice-4411']) expect(stored).to.not.include(clear);

      const reply = await settledReply(cloud, id);
      const outcome = await handled(cloud, id);
      expect(outcome).to.deep.include({ outcome: 'answered', detail: null });
      expect(reply).to.deep.include({ to: '16505553001', kind: 'answer' });
      const conversation = await server.platform.eventStore.readStream(conversationStream(outcome.conversation_id));
      const asked = conversation.find((event) => event.type === 'UserMessagePosted');
      expect((asked?.data as Json).text).to.equal('Is this total right?\n\n[Document "invoice-4411.pdf"]\nInvoice 4411 for Rosa Marquez\nTotal due: 129.90 EUR');
      const fetched = graph.requests.slice(graphBefore).filter((request) => request.method === 'GET');
      expect(fetched.map((request) => request.path)).to.deep.equal(['/v23.0/media-doc-1', '/media/media-doc-1']);
      for (const request of fetched) expect(request.headers.authorization).to.equal(`Bearer ${cloud.access_token}`);
    });

    it('tells the sender it could not read one that is gone from the Cloud API, of a type it does not read, broken, or without text', async () => {
      const gone = wamid();
      await deliverTo(cloud, [{ from: '16505553002', id: gone, type: 'document', media_id: 'media-doc-expired', filename: 'scan.pdf' }]);
      expect(await settledReply(cloud, gone)).to.deep.include({ text: DOCUMENT_NOT_READ_NOTICE, kind: 'notice', conversation_id: null });
      expect(await handled(cloud, gone)).to.deep.include({ outcome: 'assistant_failed', detail: 'document_not_fetched' });

      // A program passed off as a PDF.
      graph.serveMedia('media-doc-2', Buffer.concat([Buffer.from('MZ', 'latin1'), Buffer.alloc(120, 0), Buffer.from('PE\0\0', 'latin1')]), 'application/pdf');
      const foreign = wamid();
      await deliverTo(cloud, [{ from: '16505553002', id: foreign, type: 'document', media_id: 'media-doc-2', filename: 'invoice.pdf' }]);
      expect(await settledReply(cloud, foreign)).to.deep.include({ text: DOCUMENT_NOT_READ_NOTICE, kind: 'notice' });
      expect(await handled(cloud, foreign)).to.deep.include({ outcome: 'assistant_failed', detail: 'unsupported_document_type' });

      // A PDF by its first bytes, broken after them.
      graph.serveMedia('media-doc-4', Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog', 'latin1'), 'application/pdf');
      const broken = wamid();
      await deliverTo(cloud, [{ from: '16505553002', id: broken, type: 'document', media_id: 'media-doc-4', filename: 'broken.pdf' }]);
      expect(await settledReply(cloud, broken)).to.deep.include({ text: DOCUMENT_NOT_READ_NOTICE, kind: 'notice' });
      expect(await handled(cloud, broken)).to.deep.include({ outcome: 'assistant_failed', detail: 'document_not_read' });

      graph.serveMedia('media-doc-3', Buffer.from('   \n\n  ', 'utf8'), 'text/plain');
      const blank = wamid();
      await deliverTo(cloud, [{ from: '16505553002', id: blank, type: 'document', media_id: 'media-doc-3', filename: 'notes.txt' }]);
      expect(await settledReply(cloud, blank)).to.deep.include({ text: DOCUMENT_NOT_READ_NOTICE, kind: 'notice' });
      expect(await handled(cloud, blank)).to.deep.include({ outcome: 'assistant_failed', detail: 'nothing_read' });
    });

    it('tells a sender that only text is understood where documents cannot be fetched (no access token: the outbox)', async () => {
      const id = wamid();
      await deliverTo(outbox, [{ from: '16505553003', id, type: 'document', media_id: 'media-doc-1', filename: 'invoice-4411.pdf' }]);
      expect(await settledReply(outbox, id)).to.deep.include({ text: ONLY_TEXT_NOTICE, kind: 'notice' });
      expect(await handled(outbox, id)).to.deep.include({ outcome: 'unsupported_type', detail: 'type_document' });
    });
  });

  describe('erasing a WhatsApp conversation (docs/personal-data.md)', () => {
    it('erases its messages and replies too, and the sender\'s messages that became no turn: their number, name and text, the replies\' recipient and text', async () => {
      const id = wamid();
      await deliverTo(outbox, [{ from: '15550009999', id, text: 'My card number ends in 4242', name: 'Walter Skinner' }]);
      const reply = await settledReply(outbox, id);
      const outcome = await handled(outbox, id);
      const messageStream = whatsappMessageStream(inboundId(outbox, id));
      const storedBefore = JSON.stringify([...(await server.platform.storedEvents.readStream(messageStream)), ...(await server.platform.storedEvents.readStream(whatsappReplyStream(reply.id)))]);
      for (const text of ['4242', 'Walter Skinner']) expect(storedBefore).to.not.include(text);
      expect(reply.to).to.equal('15550009999');
      // A photo of theirs became no turn: it got a notice, and is theirs to erase too.
      const photo = wamid();
      await deliverTo(outbox, [{ from: '15550009999', id: photo, type: 'image' }]);
      const notice = await settledReply(outbox, photo);
      expect(notice).to.deep.include({ to: '15550009999', kind: 'notice', conversation_id: null });

      const erased = await server.request('POST', `/api/v1/conversations/${outcome.conversation_id}/erase`, { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(erased.status, erased.text).to.equal(200);

      const message = await server.platform.eventStore.readStream(messageStream);
      expect(message.map((event) => event.type)).to.deep.equal(['WhatsAppMessageReceived', 'WhatsAppMessageHandled', 'WhatsAppMessageErased']);
      expect(message[0].data).to.deep.include({ from: ERASED_PERSONAL_DATA, profile_name: ERASED_PERSONAL_DATA, text: ERASED_PERSONAL_DATA, wamid: id });
      const replyEvents = await server.platform.eventStore.readStream(whatsappReplyStream(reply.id));
      expect(replyEvents.map((event) => event.type)).to.deep.equal(['WhatsAppReplyQueued', 'WhatsAppReplyAttemptStarted', 'WhatsAppReplyKept', 'WhatsAppReplyErased']);
      expect(replyEvents[0].data).to.deep.include({ to: ERASED_PERSONAL_DATA, text: ERASED_PERSONAL_DATA, conversation_id: outcome.conversation_id });
      const listed = (await outboxItems(`?tenant_id=${outbox.account.tenant_id}&limit=1000`)).find((item) => item.id === reply.id);
      expect(listed).to.deep.include({ to: ERASED_PERSONAL_DATA, text: ERASED_PERSONAL_DATA, status: 'kept' });
      const photoEvents = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, photo)));
      expect(photoEvents.map((event) => event.type)).to.deep.equal(['WhatsAppMessageReceived', 'WhatsAppMessageHandled', 'WhatsAppMessageErased']);
      const noticeEvents = await server.platform.eventStore.readStream(whatsappReplyStream(notice.id));
      expect(noticeEvents.map((event) => event.type)).to.deep.equal(['WhatsAppReplyQueued', 'WhatsAppReplyAttemptStarted', 'WhatsAppReplyKept', 'WhatsAppReplyErased']);
      expect(noticeEvents[0].data).to.deep.include({ to: ERASED_PERSONAL_DATA, text: ERASED_PERSONAL_DATA });
      const started: Json = (await server.platform.eventStore.readStream(conversationStream(outcome.conversation_id)))[0].data;
      expect(started).to.deep.include({ contact: ERASED_PERSONAL_DATA, contact_name: ERASED_PERSONAL_DATA });
      expect(started.started_by.id).to.match(/^whatsapp:[0-9a-f]{32}$/);
      // The number is nowhere left to read: not in an event, not in the conversation's document.
      const everything = JSON.stringify(await server.platform.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 }));
      expect(everything).to.not.include('15550009999');
      const document = await server.platform.readStore.collection(CONVERSATIONS).get(outcome.conversation_id);
      expect(document).to.deep.include({ deleted: true, contact: null });

      // What they send after the erasure is a new conversation's, not erased.
      const later = wamid();
      await deliverTo(outbox, [{ from: '15550009999', id: later, type: 'image' }]);
      expect((await settledReply(outbox, later)).to).to.equal('15550009999');
      const again = await server.request('POST', `/api/v1/conversations/${outcome.conversation_id}/erase`, { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(again.status, again.text).to.equal(200);
      const laterEvents = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, later)));
      expect(laterEvents.map((event) => event.type)).to.deep.equal(['WhatsAppMessageReceived', 'WhatsAppMessageHandled']);
    });

    it('erases a sender named by their number (POST /api/v1/tenant/end-users/erase): their conversation, and their messages that became no turn', async () => {
      const number = '15550008888';
      const text = wamid();
      await deliverTo(outbox, [{ from: number, id: text, text: 'My order number is 991' }]);
      const outcome = await handled(outbox, text);
      const photo = wamid();
      await deliverTo(outbox, [{ from: number, id: photo, type: 'image' }]);
      await settledReply(outbox, photo);
      const erased = await server.request('POST', '/api/v1/tenant/end-users/erase', { headers: { authorization: `Bearer ${outbox.account.token}` }, body: { whatsapp_number: `+${number}` } });
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.deep.include({ conversations: [outcome.conversation_id], leads: [], whatsapp_messages: 1 });
      for (const id of [text, photo]) {
        const events = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, id)));
        expect(events.at(-1)?.type, id).to.equal('WhatsAppMessageErased');
        expect(events[0].data).to.deep.include({ from: ERASED_PERSONAL_DATA });
      }
    });

    it('erases the stray messages a sender sent since ids became digests, for a conversation started under their number', async () => {
      const number = '16505557700';
      const { conversationId } = await legacyConversationOf(number);
      // A photo after the upgrade: no turn, its sender the digest of the number.
      const photo = wamid();
      await deliverTo(outbox, [{ from: number, id: photo, type: 'image' }]);
      const notice = await settledReply(outbox, photo);
      expect(notice).to.deep.include({ conversation_id: null, kind: 'notice' });

      const erased = await server.request('POST', `/api/v1/conversations/${conversationId}/erase`, { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(erased.status, erased.text).to.equal(200);
      const photoEvents = await server.platform.eventStore.readStream(whatsappMessageStream(inboundId(outbox, photo)));
      expect(photoEvents.map((event) => event.type)).to.deep.equal(['WhatsAppMessageReceived', 'WhatsAppMessageHandled', 'WhatsAppMessageErased']);
      expect(photoEvents[0].data).to.deep.include({ from: ERASED_PERSONAL_DATA });
      const noticeEvents = await server.platform.eventStore.readStream(whatsappReplyStream(notice.id));
      expect(noticeEvents.at(-1)?.type).to.equal('WhatsAppReplyErased');
    });
  });

  describe('what is recorded', () => {
    it('has every event audited with its actor, the channel’s among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members([
        'WhatsAppConfigured',
        'WhatsAppMessageReceived',
        'WhatsAppMessageHandled',
        'WhatsAppReplyQueued',
        'WhatsAppReplyAttemptStarted',
        'WhatsAppReplyKept',
        'WhatsAppReplySent',
        'WhatsAppReplyFailed',
        'WhatsAppReplyAbandoned',
        'WhatsAppReplyStatusReported',
      ]);
      const audit = await server.request('GET', '/api/v1/org/audit-logs?action=WhatsAppConfigured', { headers: { authorization: `Bearer ${outbox.account.token}` } });
      expect(audit.json.items.map((entry: Json) => entry.actor_kind)).to.deep.equal(['admin']);
    });

    it('never has a secret in clear in an answer, a log line, a stored event or the audit log', async () => {
      expect(secrets.length).to.be.greaterThan(6);
      const answers: string[] = [];
      for (const channel of [outbox, cloud]) answers.push((await getConfig(channel.account.tenant_id)).text);
      answers.push((await server.request('GET', '/api/v1/admin/whatsapp/configs?limit=1000', { headers: asAdmin() })).text);
      answers.push((await server.request('GET', '/api/v1/admin/whatsapp/outbox?limit=1000', { headers: asAdmin() })).text);
      const events = JSON.stringify(await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 }));
      const entries: unknown[] = [];
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const found = await server.platform.readStore.collection(AUDIT_LOG).find({ limit: 1000, ...(cursor ? { cursor } : {}) });
        entries.push(...found.items);
        cursor = found.next_cursor ?? undefined;
      }
      const audit = JSON.stringify(entries);
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
