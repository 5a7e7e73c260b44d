// An end user's export and erasure (GET /api/v1/tenant/end-users/export, POST
// /api/v1/tenant/end-users/erase; application/personal-data/) over HTTP: the export holds the
// conversations (with their messages) and leads of a verified widget visitor named by the host
// site's user id, nobody else's; the erasure takes every conversation they started (those of
// before ids were digests too) and every lead they left, another visitor keeping theirs, and
// asking again erases nothing more. Refusals: 401, 403 for a member, 400 naming the field.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { identitySignature } from '../../application/widget/widget-access';
import { senderPartyId } from '../../application/whatsapp/whatsapp-webhook';
import { conversationStream } from '../../domain/conversation/conversation';
import { leadStream } from '../../domain/lead/lead';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { startConversation } from '../support/conversations';
import { userContext } from '../support/context';
import { type Account, joinAs, liftSeatLimit, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { asVisitor, newVisitorId } from '../support/widget-visitors';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('an end user’s export and erasure (/api/v1/tenant/end-users)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let token: string;
  let secret: string;
  let workspaceId: string;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const erase = (body: unknown, account: Account = owner) => server.request('POST', '/api/v1/tenant/end-users/erase', { headers: as(account), body });
  const signed = (userId: string, visitorId = newVisitorId()) => asVisitor(token, visitorId, { 'x-widget-user-id': userId, 'x-widget-user-hash': identitySignature(secret, userId) });
  const chat = async (headers: Record<string, string>, message: string): Promise<string> => {
    const response = await server.request('POST', '/api/v1/widget/chat', { headers, body: { message } });
    expect(response.status, response.text).to.equal(200);
    return response.json.conversation_id;
  };
  const textOf = async (conversationId: string): Promise<unknown> => ((await server.platform.eventStore.readStream(conversationStream(conversationId)))[1].data as Json).text;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'end-user-erasure-org');
    await liftSeatLimit(server, owner.tenant_id);
    member = await joinAs(server, await registerOwner(server, 'end-user-erasure-member'), owner.tenant_id, 'member');
    token = await widgetTokenOf(server, owner);
    secret = (await server.request('POST', '/api/v1/tenant/widget/identity-secret', { headers: as(owner) })).json.identity_secret;
    expect((await server.request('POST', '/api/v1/tenant/widget', { headers: as(owner), body: { identity_verification: 'optional' } })).status).to.equal(200);
    workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
  });
  after(() => server.close());

  it('refuses without a token (401), a member (403), and a body that names nobody, both ways or badly (400 naming the field), erasing nothing', async () => {
    expect((await server.request('POST', '/api/v1/tenant/end-users/erase', { body: { verified_user_id: 'x' } })).status).to.equal(401);
    const byMember = await erase({ verified_user_id: 'customer-1' }, member);
    expect([byMember.status, byMember.json.code]).to.deep.equal([403, 'insufficient_role']);
    const cases: Array<[unknown, string]> = [
      [{}, 'verified_user_id'],
      [{ verified_user_id: 'a', whatsapp_number: '+16505551234' }, 'whatsapp_number'],
      [{ verified_user_id: '' }, 'verified_user_id'],
      [{ verified_user_id: 'has spaces' }, 'verified_user_id'],
      [{ verified_user_id: 42 }, 'verified_user_id'],
      [{ whatsapp_number: 'call me' }, 'whatsapp_number'],
      [{ whatsapp_number: '+1 650' }, 'whatsapp_number'],
    ];
    for (const [body, field] of cases) {
      const refused = await erase(body);
      expect([refused.status, refused.json.code, refused.json.field], JSON.stringify(body)).to.deep.equal([400, 'invalid_request', field]);
      expect(await refused.events()).to.deep.equal([]);
    }
  });

  it('erases every conversation the verified visitor started and every lead they left, on any device; another visitor keeps theirs; again erases nothing more', async () => {
    const first = await chat(signed('customer-7'), 'My card ends in 4242');
    const second = await chat(signed('customer-7'), 'And my address is 1 Main St');
    const someoneElse = await chat(signed('customer-8'), 'I am someone else');
    const anonymous = await chat(asVisitor(token, newVisitorId()), 'Just browsing');
    // Left outside a conversation.
    const lead = await server.request('POST', '/api/v1/widget/leads', { headers: signed('customer-7'), body: { name: 'Dana', email: 'dana@example.com' } });
    expect(lead.status, lead.text).to.equal(201);
    // A conversation started before ids were digests: its starter the user id itself.
    const legacy = { kind: 'end_user' as const, id: 'verified:customer-7' };
    const legacyId = await startConversation(server, owner, { channel: 'widget', workspace_id: workspaceId, title: 'Before the upgrade', started_by: legacy });
    await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());

    // Their right of access first: what the organization holds of them.
    const exported = await server.request('GET', '/api/v1/tenant/end-users/export?verified_user_id=customer-7', { headers: as(owner) });
    expect(exported.status, exported.text).to.equal(200);
    expect(exported.json).to.deep.include({ end_user: { verified_user_id: 'customer-7' }, truncated: false });
    expect(exported.json.conversations.map((conversation: Json) => conversation.id)).to.have.members([first, second, legacyId]);
    const firstExported = exported.json.conversations.find((conversation: Json) => conversation.id === first);
    expect(firstExported).to.deep.include({ verified_user_id: 'customer-7', channel: 'widget' });
    expect(firstExported.messages.map((message: Json) => [message.role, message.text])[0]).to.deep.equal(['user', 'My card ends in 4242']);
    expect(exported.json.leads.map((item: Json) => [item.id, item.email])).to.deep.equal([[lead.json.lead_id, 'dana@example.com']]);
    expect(exported.text).to.not.include('I am someone else').and.not.include('Just browsing');
    const exportedByMember = await server.request('GET', '/api/v1/tenant/end-users/export?verified_user_id=customer-7', { headers: as(member) });
    expect([exportedByMember.status, exportedByMember.json.code]).to.deep.equal([403, 'insufficient_role']);
    for (const [query, field] of [['', 'verified_user_id'], ['?verified_user_id=a&whatsapp_number=%2B16505551234', 'whatsapp_number'], ['?whatsapp_number=x', 'whatsapp_number'], ['?verified_user_id=a&verified_user_id=b', 'verified_user_id']]) {
      const refused = await server.request('GET', `/api/v1/tenant/end-users/export${query}`, { headers: as(owner) });
      expect([refused.status, refused.json.code, refused.json.field], query).to.deep.equal([400, 'invalid_request', field]);
    }

    const erased = await erase({ verified_user_id: 'customer-7' });
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.json.conversations).to.have.members([first, second, legacyId]);
    expect(erased.json).to.deep.include({ leads: [lead.json.lead_id], whatsapp_messages: 0 });
    for (const conversationId of [first, second]) expect(await textOf(conversationId)).to.equal(ERASED_PERSONAL_DATA);
    const [captured] = await server.platform.eventStore.readStream(leadStream(lead.json.lead_id));
    expect(captured.data).to.deep.include({ name: ERASED_PERSONAL_DATA, email: ERASED_PERSONAL_DATA, verified_user_id: ERASED_PERSONAL_DATA });
    expect(await textOf(someoneElse)).to.equal('I am someone else');
    expect(await textOf(anonymous)).to.equal('Just browsing');
    const listed = await server.request('GET', '/api/v1/conversations?limit=100', { headers: as(owner) });
    expect(listed.json.items.map((item: Json) => item.id)).to.include.members([someoneElse, anonymous]).and.not.include.members([first, second, legacyId]);
    // The erasures are the admin's, in the audit log.
    const types = await erased.events();
    expect(types.filter((type) => type === 'ConversationErased@conversation')).to.have.length(3);
    expect(types).to.include('LeadErased@lead');

    // Nothing of them is left to export.
    const after = await server.request('GET', '/api/v1/tenant/end-users/export?verified_user_id=customer-7', { headers: as(owner) });
    expect(after.json).to.deep.include({ conversations: [], leads: [] });

    const again = await erase({ verified_user_id: 'customer-7' });
    expect(again.status, again.text).to.equal(200);
    expect(again.json.conversations).to.have.members([first, second, legacyId]);
    expect(await again.events()).to.deep.equal([]);
  });

  it('erases the conversations a WhatsApp sender started, named by their number in any usual spelling', async () => {
    const number = '447700900123';
    const started: string[] = [];
    for (const starter of [senderPartyId(server.platform.secrets, owner.tenant_id, number), `whatsapp:${number}`]) {
      const conversationId = server.platform.ids.newId();
      const party = { kind: 'end_user' as const, id: starter };
      await handleCommand(
        server.platform.commands,
        conversationAggregate,
        conversationStream(conversationId),
        { type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: owner.tenant_id, workspace_id: workspaceId, channel: 'whatsapp', title: 'Hello', started_by: party, ...(starter.length > 30 ? { contact: number } : {}) } },
        userContext({ tenant_id: owner.tenant_id, actor: party }),
      );
      started.push(conversationId);
    }
    await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());
    const erased = await erase({ whatsapp_number: '+44 7700-900123' });
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.json.conversations).to.have.members(started);
    const [digestStarted] = await server.platform.eventStore.readStream(conversationStream(started[0]));
    expect(digestStarted.data).to.deep.include({ title: ERASED_PERSONAL_DATA, contact: ERASED_PERSONAL_DATA });
  });
});
