// A WhatsApp sender's messages are answered in the order received (docs/whatsapp.md, "The
// turn"): a second message that arrives while the first one's turn is still waiting for the
// model waits for it, so its turn sees the first question with its answer, and the replies are
// queued in order. And a sender who asks the model for a person is handed to one
// (hand_off_to_person): the note is their reply, and the assistant is quiet after. The model is
// a local OpenAI-compatible server whose completions are scripted (the first one held until the
// test lets it go). Texts sent in quick succession are asked in one turn (WHATSAPP_MERGE_SECONDS).

import { expect } from 'chai';
import { HANDOFF_NOTE, HANDOFF_TOOL_NAME } from '../../application/chat/handoff-tool';
import { whatsappMessageStream } from '../../domain/whatsapp-message/whatsapp-message';
import { type Account, registerOwner } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';
import { type Sent, metaPayload, signed } from '../support/whatsapp';

const ADMIN = { email: 'root@whatsapp-order.test', password: 'root password 123' };
const NUMBER = { phone_number_id: '100000000000777', display: '15550000777' };
const APP_SECRET = 'whatsapp-order-app-secret-0123456789';
const WAIT_MS = 15_000;

/** A platform whose owner's organization has the WhatsApp number configured. */
interface Channel {
  server: TestServer;
  owner: Account;
}

/** Starts a platform with `settings` and configures the number for a new organization. */
async function startChannel(slug: string, settings: Record<string, string>): Promise<Channel> {
  const server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password, ...settings });
  const owner = await registerOwner(server, slug);
  await subscribeTo(server, owner.tenant_id, 'growth');
  const adminToken = (await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token;
  const configured = await server.request('PUT', `/api/v1/admin/whatsapp/config?tenant_id=${owner.tenant_id}`, {
    headers: { authorization: `Bearer ${adminToken}` },
    body: { phone_number_id: NUMBER.phone_number_id, display_phone_number: `+${NUMBER.display}`, verify_token: `verify-${slug}-0123456789`, app_secret: APP_SECRET },
  });
  expect(configured.status, configured.text).to.equal(200);
  return { server, owner };
}

const deliverTo = ({ server }: Channel, messages: Sent[]) => {
  const raw = JSON.stringify(metaPayload(NUMBER, messages));
  return server.request('POST', '/api/v1/whatsapp/webhook', { rawBody: raw, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signed(APP_SECRET, raw) } });
};
const messageIdIn = ({ server, owner }: Channel, wamid: string): string => server.platform.ids.fromKey(`whatsappMessage:${owner.tenant_id}:${wamid}`);

/** How the message was handled (WhatsAppMessageHandled), once it is. */
async function outcomeIn(channel: Channel, wamid: string): Promise<{ outcome: string; conversation_id: string; reply_id: string; detail: string | null }> {
  let outcome: { outcome: string; conversation_id: string; reply_id: string; detail: string | null } | null = null;
  await eventually(async () => {
    const events = await channel.server.platform.eventStore.readStream(whatsappMessageStream(messageIdIn(channel, wamid)));
    outcome = (events.find((event) => event.type === 'WhatsAppMessageHandled')?.data as typeof outcome) ?? null;
    return outcome !== null;
  }, WAIT_MS, `the outcome of ${wamid}`);
  return outcome!;
}

describe('WhatsApp with a language model: turns in order, a handoff asked of the model', function () {
  this.timeout(60_000);
  let llm: OpenAiCompatibleServer;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let owner: Account;

  const deliver = (messages: Sent[]) => deliverTo({ server, owner }, messages);
  const messageId = (wamid: string): string => messageIdIn({ server, owner }, wamid);
  const outcomeOf = (wamid: string) => outcomeIn({ server, owner }, wamid);

  before(async () => {
    llm = await OpenAiCompatibleServer.start();
    receiver = await startWebhookReceiver();
    // The handoff webhook is a local receiver.
    ({ server, owner } = await startChannel('wa-order', { OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ...llm.settings }));
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await llm.close();
  });

  it('lets the second of two messages in a row wait for the first one’s answer, and answers them in order', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    llm.script({ deltas: ['We ship ', 'to Norway, yes.'], hold: { index: 0, until: held } }, { deltas: ['Delivery to Oslo takes three days.'] });
    const before = llm.requests.length;

    expect((await deliver([{ from: '4791234567', id: 'wamid.ORDER-1', text: 'Do you ship to Norway?' }])).status).to.equal(200);
    await eventually(async () => llm.requests.length === before + 1, WAIT_MS, 'the first question asked of the model');
    expect((await deliver([{ from: '4791234567', id: 'wamid.ORDER-2', text: 'How long to Oslo?' }])).status).to.equal(200);
    // The second message is recorded at once; its turn waits while the first answer is held.
    await eventually(async () => (await server.platform.eventStore.readStream(whatsappMessageStream(messageId('wamid.ORDER-2')))).length === 1, WAIT_MS, 'the second message recorded');
    release();

    const first = await outcomeOf('wamid.ORDER-1');
    const second = await outcomeOf('wamid.ORDER-2');
    expect([first.outcome, second.outcome]).to.deep.equal(['answered', 'answered']);
    expect(second.conversation_id).to.equal(first.conversation_id);
    // The second turn saw the first question with its answer.
    const asked = llm.requests[before + 1].body.messages.filter((message) => message.role !== 'system').map((message) => [message.role, message.content]);
    expect(asked.slice(-3)).to.deep.equal([
      ['user', 'Do you ship to Norway?'],
      ['assistant', 'We ship to Norway, yes.'],
      ['user', 'How long to Oslo?'],
    ]);
    // The replies were queued in the order of the messages.
    const [firstReply, secondReply] = await Promise.all([first.reply_id, second.reply_id].map((id) => server.platform.eventStore.readStream(`whatsappReply-${id}`)));
    expect(firstReply[0].position).to.be.lessThan(secondReply[0].position);
  });

  it('asks texts sent in quick succession in one turn: a burst at once, and what the sender wrote while an answer ran', async () => {
    const before = llm.requests.length;
    // Three texts delivered in one webhook call: one turn, one answer.
    llm.script({ deltas: ['Your order 1234 left the warehouse today.'] });
    expect(
      (
        await deliver([
          { from: '4791112222', id: 'wamid.BURST-1', text: 'Hi' },
          { from: '4791112222', id: 'wamid.BURST-2', text: 'my order 1234' },
          { from: '4791112222', id: 'wamid.BURST-3', text: "hasn't arrived" },
        ])
      ).status,
    ).to.equal(200);
    const first = await outcomeOf('wamid.BURST-1');
    expect(first.outcome).to.equal('answered');
    for (const wamid of ['wamid.BURST-2', 'wamid.BURST-3']) {
      expect(await outcomeOf(wamid)).to.deep.include({ outcome: 'merged', conversation_id: null, reply_id: null, detail: `merged_into:${messageId('wamid.BURST-1')}` });
    }
    expect(llm.requests.length).to.equal(before + 1);
    const asked = llm.requests[before].body.messages.filter((message) => message.role === 'user').map((message) => message.content);
    expect(asked.at(-1)).to.equal("Hi\nmy order 1234\nhasn't arrived");
    const [firstEvents] = [await server.platform.eventStore.readStream(whatsappMessageStream(messageId('wamid.BURST-1')))];
    expect(firstEvents.map((event) => event.type)).to.deep.equal(['WhatsAppMessageReceived', 'WhatsAppMessagesMerged', 'WhatsAppMessageHandled']);
    expect(firstEvents[1].data).to.deep.include({ merged_ids: [messageId('wamid.BURST-2'), messageId('wamid.BURST-3')] });
    const [reply] = await server.platform.eventStore.readStream(`whatsappReply-${first.reply_id}`);
    expect(reply.data).to.deep.include({ to: '4791112222', text: 'Your order 1234 left the warehouse today.' });
    const conversation = await server.request('GET', `/api/v1/conversations/${first.conversation_id}/messages`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(conversation.json.items.map((item: { role: string; text: string }) => [item.role, item.text])).to.deep.equal([
      ['user', "Hi\nmy order 1234\nhasn't arrived"],
      ['assistant', 'Your order 1234 left the warehouse today.'],
    ]);

    // Erasing the conversation erases the merged messages with it (messages of the sender that became no turn).
    const erased = await server.request('POST', `/api/v1/conversations/${first.conversation_id}/erase`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(erased.status, erased.text).to.equal(200);
    for (const wamid of ['wamid.BURST-1', 'wamid.BURST-2', 'wamid.BURST-3']) {
      expect((await server.platform.eventStore.readStream(whatsappMessageStream(messageId(wamid)))).at(-1)?.type, wamid).to.equal('WhatsAppMessageErased');
    }

    // Two more while the next answer runs: the first of them asks for both after it.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    llm.script({ deltas: ['Sorry about that.'], hold: { index: 0, until: held } }, { deltas: ['It will be there on Friday.'] });
    expect((await deliver([{ from: '4791112222', id: 'wamid.BURST-4', text: 'It was due Monday' }])).status).to.equal(200);
    await eventually(async () => llm.requests.length === before + 2, WAIT_MS, 'the fourth message asked of the model');
    expect((await deliver([{ from: '4791112222', id: 'wamid.BURST-5', text: 'when will it come?' }])).status).to.equal(200);
    expect((await deliver([{ from: '4791112222', id: 'wamid.BURST-6', text: 'thanks' }])).status).to.equal(200);
    await eventually(async () => (await server.platform.eventStore.readStream(whatsappMessageStream(messageId('wamid.BURST-6')))).length === 1, WAIT_MS, 'the sixth message recorded');
    release();
    expect((await outcomeOf('wamid.BURST-4')).outcome).to.equal('answered');
    expect((await outcomeOf('wamid.BURST-5')).outcome).to.equal('answered');
    expect(await outcomeOf('wamid.BURST-6')).to.deep.include({ outcome: 'merged', detail: `merged_into:${messageId('wamid.BURST-5')}` });
    expect(llm.requests.length).to.equal(before + 3);
    expect(llm.requests[before + 2].body.messages.filter((message) => message.role === 'user').map((message) => message.content).at(-1)).to.equal('when will it come?\nthanks');
  });

  it('hands the sender to a person when the model asks (hand_off_to_person): the note is the reply, the next message waits for the person', async () => {
    const webhook = await server.request('POST', '/api/v1/tenant/handoff', { headers: { authorization: `Bearer ${owner.token}` }, body: { url: `${receiver.url}/hooks/handoff` } });
    expect(webhook.status, webhook.text).to.equal(200);
    llm.script({ tool_calls: [{ id: 'call_person', name: HANDOFF_TOOL_NAME, arguments: ['{"reason":"Asks for a person"}'] }] });
    expect((await deliver([{ from: '4798765432', id: 'wamid.PERSON-1', text: 'Can I talk to a human please?' }])).status).to.equal(200);
    const handed = await outcomeOf('wamid.PERSON-1');
    expect(handed.outcome).to.equal('answered');
    const [queued] = await server.platform.eventStore.readStream(`whatsappReply-${handed.reply_id}`);
    expect(queued.data).to.deep.include({ to: '4798765432', text: HANDOFF_NOTE, kind: 'answer' });
    const shown = await server.request('GET', `/api/v1/conversations/${handed.conversation_id}`, { headers: { authorization: `Bearer ${owner.token}` } });
    expect(shown.json).to.deep.include({ status: 'handed_off', channel: 'whatsapp' });

    const asked = llm.requests.length;
    expect((await deliver([{ from: '4798765432', id: 'wamid.PERSON-2', text: 'Hello?' }])).status).to.equal(200);
    expect(await outcomeOf('wamid.PERSON-2')).to.deep.include({ outcome: 'paused', reply_id: null });
    expect(llm.requests.length).to.equal(asked);
  });

  describe('with WHATSAPP_PAUSE_SECONDS', () => {
    const PAUSE_SECONDS = 3;
    let paused: Channel;
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    before(async () => {
      paused = await startChannel('wa-pause', { WHATSAPP_PAUSE_SECONDS: String(PAUSE_SECONDS), ...llm.settings });
    });
    after(() => paused.server.close());

    it('answers a text once the sender has paused: texts written a moment apart, each delivered alone, are one turn', async () => {
      const before = llm.requests.length;
      llm.script({ deltas: ['Your order 1234 left the warehouse today.'] });
      expect((await deliverTo(paused, [{ from: '4793334444', id: 'wamid.PAUSE-1', text: 'Hi' }])).status).to.equal(200);
      await sleep(300);
      expect((await deliverTo(paused, [{ from: '4793334444', id: 'wamid.PAUSE-2', text: 'my order 1234' }])).status).to.equal(200);
      await sleep(300);
      expect((await deliverTo(paused, [{ from: '4793334444', id: 'wamid.PAUSE-3', text: "hasn't arrived" }])).status).to.equal(200);
      // The sender has not paused for PAUSE_SECONDS yet: nothing is asked of the model.
      await sleep(1000);
      expect(llm.requests.length).to.equal(before);

      expect((await outcomeIn(paused, 'wamid.PAUSE-1')).outcome).to.equal('answered');
      for (const wamid of ['wamid.PAUSE-2', 'wamid.PAUSE-3']) {
        expect(await outcomeIn(paused, wamid)).to.deep.include({ outcome: 'merged', detail: `merged_into:${messageIdIn(paused, 'wamid.PAUSE-1')}` });
      }
      expect(llm.requests.length).to.equal(before + 1);
      expect(llm.requests[before].body.messages.filter((message) => message.role === 'user').map((message) => message.content).at(-1)).to.equal("Hi\nmy order 1234\nhasn't arrived");
    });
  });
});
