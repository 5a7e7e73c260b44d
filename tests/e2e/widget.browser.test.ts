// The website widget in headless Chromium (Debian's `chromium` at /usr/bin/chromium, driven by
// playwright-core; nothing is downloaded) against the real platform server. A host page on
// another origin (a tiny local HTTP server, which the tenant adds to its allowed origins)
// embeds /widget.js under hostile CSS meant to break any widget that lives in the page's own
// DOM. A visitor asks a question answered from a document the tenant uploaded, and sees the
// answer stream in over /ws/chat with its citation; rates it, leaves a lead, asks for a person;
// the same with WebSocket blocked answers over HTTP; the public chat page /chat/{slug} works;
// the keyboard alone opens, uses and closes the widget; and a visitor erases their conversation.
//
// Screenshots are kept as test artifacts in test-artifacts/widget/ (TEST_ARTIFACTS_DIR to put
// them elsewhere). Without /usr/bin/chromium the suite reports itself skipped and says why
// (.ci/run installs it).

import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { documentStream } from '../../domain/document/document';
import { conversationStream } from '../../domain/conversation/conversation';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { verifiedPartyId } from '../../application/widget/widget-access';
import { launchChromium, skipUnlessChromium } from '../support/browser';
import { type Account, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

// Run in the page (the tests are compiled without the DOM's types).
/** Whether an element has the focus inside the widget's shadow root. */
const FOCUSED = (element: any): boolean => element.getRootNode().activeElement === element; // eslint-disable-line @typescript-eslint/no-explicit-any
/** An element's computed style property (the property comes as the argument: a function is sent to the page as its source). */
const COMPUTED = (element: any, property: string): string => element.ownerDocument.defaultView.getComputedStyle(element)[property]; // eslint-disable-line @typescript-eslint/no-explicit-any
const ARTIFACTS = path.resolve(process.env.TEST_ARTIFACTS_DIR ?? path.join(__dirname, '..', '..', '..', 'test-artifacts'), 'widget');

const REFUND_POLICY = [
  '# Refund policy',
  '',
  'Refunds are issued within 14 days of the request, to the card you paid with.',
  'Gift cards cannot be refunded.',
].join('\n');
const QUESTION = 'How long do refunds take?';

/**
 * CSS a careless or hostile host page might carry: everything of the page hidden, every text
 * red and of size 0, every button and div restyled. The widget's shadow root keeps it out.
 */
const HOSTILE_CSS = `
body * { display: none !important; color: red !important; font-size: 0 !important; visibility: hidden !important; opacity: 0 !important; }
html, body { font: 0/0 serif !important; color: red !important; background: #222 !important; }
button { background: red !important; width: 1px !important; height: 1px !important; border: 9px dotted lime !important; }
div { all: unset !important; position: static !important; }
textarea, input { display: none !important; }
ol, li, p, span { display: none !important; }
`;

interface HostPage {
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** Another origin's site embedding the widget the way the docs say (a script tag with data-token). */
async function startHostPage(platformUrl: string, token: string): Promise<HostPage> {
  const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop</title><style>${HOSTILE_CSS}</style></head>
<body>
<h1>A shop</h1>
<p>Some text of the host page. <a href="#top">A link</a></p>
<script src="${platformUrl}/widget.js" data-token="${token}" async></script>
</body>
</html>`;
  const server = http.createServer((request, response) => {
    response.writeHead(request.url === '/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    response.end(request.url === '/' ? page : 'not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    origin,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Replaces WebSocket before any script runs, as a proxy that refuses upgrades would make it behave: every socket fails. */
const BLOCK_WEBSOCKET = `
window.__socketsTried = 0;
window.WebSocket = class BlockedWebSocket extends EventTarget {
  constructor(url) {
    super();
    window.__socketsTried += 1;
    this.url = url;
    this.readyState = 0;
    setTimeout(() => {
      this.readyState = 3;
      const error = new Event('error');
      this.dispatchEvent(error);
      if (this.onerror) this.onerror(error);
      const close = Object.assign(new Event('close'), { code: 1006, reason: '', wasClean: false });
      this.dispatchEvent(close);
      if (this.onclose) this.onclose(close);
    }, 5);
  }
  send() { throw new Error('the socket is closed'); }
  close() {}
};`;

describe('the website widget in headless Chromium', function () {
  this.timeout(120_000);
  let server: TestServer | null = null;
  let host: HostPage | null = null;
  /** Where the tenant's team is told of a handoff. */
  let handoffHook: WebhookReceiver | null = null;
  let browser: Browser | null = null;
  let context: BrowserContext | null = null;
  let page: Page | null = null;
  let owner: Account;
  let token: string;
  const slug = 'widget-shop';

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  async function screenshot(name: string, of: Page = page!): Promise<void> {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await of.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
  }

  /** The conversation the widget keeps for its visitor (localStorage, per token). */
  const conversationOf = async (target: Page): Promise<string> =>
    target.evaluate(`JSON.parse(localStorage.getItem(${JSON.stringify(`svc-widget:${token}`)}) ?? '{}').conversation_id`);

  /** The last answer bubble, once its feedback buttons show that it is complete. */
  async function finishedAnswer(target: Page) {
    const answer = target.locator('.msg.assistant[data-id]:not(.welcome)').last();
    await answer.locator('.rate').waitFor();
    return answer;
  }

  before(async function () {
    skipUnlessChromium(this);
    // The handoff webhook is a local receiver: outbound calls to it are allowed.
    server = await startTestServer({ SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
    handoffHook = await startWebhookReceiver();
    owner = await registerOwner(server, slug);
    // Handoff is a feature of the paid plans, and tells the team through the tenant's webhook.
    await subscribeTo(server, owner.tenant_id, 'starter');
    const handoff = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${handoffHook.url}/hooks/handoff` } });
    expect(handoff.status, handoff.text).to.equal(200);
    token = await widgetTokenOf(server, owner);
    // This run's screenshots only.
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    host = await startHostPage(server.url, token);

    // The site that embeds the widget is one the tenant allows.
    const configured = await server.request('POST', '/api/v1/tenant/widget', {
      headers: as(owner),
      body: { allowed_origins: [host.origin], title: 'Shop help', welcome_message: 'Hello! Ask us anything.', primary_color: '#0a7d4f', lead_form_fields: ['name', 'email'] },
    });
    expect(configured.status, configured.text).to.equal(200);

    // A document the tenant uploaded, indexed before the visitor asks.
    const workspaces = await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) });
    const workspaceId = workspaces.json.items.find((workspace: { is_default: boolean }) => workspace.is_default).id;
    const added = await server.request('POST', '/api/v1/documents/text', { headers: as(owner), body: { workspace_id: workspaceId, title: 'Refund policy', text: REFUND_POLICY } });
    expect(added.status, added.text).to.equal(201);
    await eventually(async () => (await server!.platform.eventStore.readStream(documentStream(added.json.id))).some((event) => event.type === 'DocumentIndexed'), 20_000, 'the refund policy indexed');

    browser = await launchChromium();
  });
  beforeEach(async () => {
    // A new visitor each time: their own localStorage, so their own visitor id.
    context = await browser!.newContext({ viewport: { width: 1100, height: 800 } });
    page = await context.newPage();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) await screenshot(`failed-${this.currentTest.title.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(() => undefined);
    await context?.close();
  });
  after(async () => {
    await browser?.close();
    await host?.close();
    await server?.close();
    await handoffHook?.close();
  });

  it('on a host page with hostile CSS: opens, streams an answer with its citation over /ws/chat, takes feedback, a lead and a handoff', async () => {
    const frames: Array<{ type: string }> = [];
    page!.on('websocket', (socket) => {
      if (!socket.url().includes('/ws/chat')) return;
      socket.on('framereceived', (frame) => {
        if (typeof frame.payload === 'string') frames.push(JSON.parse(frame.payload));
      });
    });
    await page!.goto(host!.url);
    const launcher = page!.locator('button.launcher');
    await launcher.waitFor();
    // The host page's rules do not reach inside: the launcher is the widget's own size and colour.
    expect(await launcher.evaluate(COMPUTED, 'backgroundColor')).to.equal('rgb(10, 125, 79)');
    expect(await launcher.boundingBox()).to.deep.include({ width: 56, height: 56 });
    expect(await launcher.getAttribute('aria-label')).to.equal('Open chat: Shop help');
    await screenshot('host-page-launcher');

    await launcher.click();
    const dialog = page!.getByRole('dialog', { name: 'Shop help' });
    await dialog.waitFor();
    expect(await launcher.getAttribute('aria-expanded')).to.equal('true');
    const input = page!.getByRole('textbox', { name: 'Message' });
    expect(await input.evaluate(FOCUSED)).to.equal(true);
    expect(await input.evaluate(COMPUTED, 'fontSize')).to.equal('15px');
    expect(await page!.locator('.msg.welcome').textContent()).to.equal('Hello! Ask us anything.');

    await input.fill(QUESTION);
    await input.press('Enter');
    const answer = await finishedAnswer(page!);
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    expect(await answer.locator('ol.sources li').allTextContents()).to.deep.equal(['Refund policy']);
    expect(await page!.getByRole('log', { name: 'Conversation' }).locator('.msg.user').last().textContent()).to.equal(`You: ${QUESTION}`);
    // Streamed over the socket: deltas before the stored answer and `done`.
    const types = frames.map((frame) => frame.type);
    expect(types[0]).to.equal('ready');
    expect(types).to.include('delta');
    expect(types).to.include('citation');
    expect(types.indexOf('delta')).to.be.below(types.lastIndexOf('message'));
    expect(types.at(-1)).to.equal('done');
    await screenshot('host-page-answer');

    const conversationId = await conversationOf(page!);
    const answerId = await answer.getAttribute('data-id');
    await answer.getByRole('button', { name: 'Helpful', exact: true }).click();
    await eventually(async () => (await answer.getByRole('button', { name: 'Helpful', exact: true }).getAttribute('aria-pressed')) === 'true', 5_000, 'the feedback acknowledged');
    await eventually(
      async () => (await server!.platform.eventStore.readStream(conversationStream(conversationId))).some((event) => event.type === 'FeedbackGiven' && (event.data as { message_id: string; rating: string }).message_id === answerId && (event.data as { rating: string }).rating === 'up'),
      5_000,
      'FeedbackGiven on the conversation',
    );

    await page!.getByRole('button', { name: 'Leave your contact details' }).click();
    const leadForm = page!.getByRole('form', { name: 'Leave your contact details' });
    await leadForm.getByLabel('Name').fill('Ada Visitor');
    await leadForm.getByLabel('Email').fill('ada@visitor.example');
    await leadForm.getByRole('button', { name: 'Send details' }).click();
    await page!.locator('.note', { hasText: 'Thank you! We will get back to you.' }).waitFor();
    const leads = await server!.request('GET', '/api/v1/tenant/leads', { headers: as(owner) });
    expect(leads.status, leads.text).to.equal(200);
    expect(leads.json.items.map((lead: { email: string }) => lead.email)).to.include('ada@visitor.example');

    await page!.getByRole('button', { name: 'Talk to a person' }).click();
    await page!.locator('.note', { hasText: 'A person from the team will answer here.' }).waitFor();
    const handoffs = await server!.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['HandoffRequested'] }, maxCount: 50 });
    expect(handoffs.some((event) => (event.data as { conversation_id: string }).conversation_id === conversationId)).to.equal(true);
    await eventually(() => handoffHook!.deliveries.some((delivery) => delivery.body.toString('utf8').includes(conversationId)), 10_000, 'the team told through the handoff webhook');
    await screenshot('host-page-lead-and-handoff');
  });

  it('answers over HTTP when WebSocket is blocked', async () => {
    await page!.addInitScript(BLOCK_WEBSOCKET);
    const sockets: string[] = [];
    page!.on('websocket', (socket) => sockets.push(socket.url()));
    const chatRequests: string[] = [];
    page!.on('request', (request) => {
      if (request.url().endsWith('/api/v1/widget/chat')) chatRequests.push(`${request.method()} ${request.headers().accept}`);
    });
    await page!.goto(host!.url);
    await page!.locator('button.launcher').click();
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill(QUESTION);
    await input.press('Enter');
    const answer = await finishedAnswer(page!);
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    expect(await answer.locator('ol.sources li').allTextContents()).to.deep.equal(['Refund policy']);
    expect(chatRequests).to.deep.equal(['POST text/event-stream, application/json;q=0.9']);
    expect(sockets).to.deep.equal([]);
    expect(await page!.evaluate('window.__socketsTried')).to.be.greaterThan(0);
    // The answer is the visitor's conversation's, stored like any other.
    const conversationId = await conversationOf(page!);
    const events = await server!.platform.eventStore.readStream(conversationStream(conversationId));
    expect(events.map((event) => event.type)).to.include.members(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
    await screenshot('http-fallback-answer');

    // Erased over HTTP too, without waiting on a socket that will not open.
    await page!.getByRole('button', { name: 'Delete this conversation' }).click();
    await page!.getByRole('alertdialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page!.locator('.note', { hasText: 'Your conversation was deleted.' }).waitFor({ timeout: 2_000 });
    expect(await conversationOf(page!)).to.equal(null);
    expect((await server!.platform.eventStore.readStream(conversationStream(conversationId))).map((event) => event.type)).to.include('ConversationErased');
  });

  it('works with the keyboard alone: Tab to the launcher, Enter opens, Enter sends, Escape closes', async () => {
    await page!.goto(host!.url);
    const launcher = page!.locator('button.launcher');
    await launcher.waitFor();
    // The host page's own link and content are hidden by its CSS: the launcher is the first stop.
    await page!.keyboard.press('Tab');
    expect(await launcher.evaluate(FOCUSED)).to.equal(true);
    await page!.keyboard.press('Enter');
    await page!.getByRole('dialog', { name: 'Shop help' }).waitFor();
    const input = page!.getByRole('textbox', { name: 'Message' });
    expect(await input.evaluate(FOCUSED)).to.equal(true);
    await page!.keyboard.type(QUESTION);
    await page!.keyboard.press('Enter');
    await finishedAnswer(page!);
    await page!.keyboard.press('Escape');
    await page!.getByRole('dialog').waitFor({ state: 'hidden' });
    expect(await launcher.getAttribute('aria-expanded')).to.equal('false');
    expect(await launcher.evaluate(FOCUSED)).to.equal(true);
    // SvcWidget.open() and close() do the same for the host page.
    await page!.evaluate('window.SvcWidget.open()');
    await page!.getByRole('dialog', { name: 'Shop help' }).waitFor();
    await page!.evaluate('window.SvcWidget.close()');
    await page!.getByRole('dialog').waitFor({ state: 'hidden' });
  });

  it('the public chat page /chat/{slug}: the branded page chats end to end in full-page mode', async () => {
    const problems: string[] = [];
    page!.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    const response = await page!.goto(`${server!.url}/chat/${slug}`);
    expect(response!.status()).to.equal(200);
    expect(await page!.locator('h1#name').textContent()).to.equal(`Org ${slug}`);
    const region = page!.getByRole('region', { name: 'Shop help' });
    await region.waitFor();
    // Full-page mode: no launcher, no close button; the chat fills the page's main area.
    expect(await page!.locator('button.launcher').count()).to.equal(0);
    expect(await page!.getByRole('button', { name: 'Close chat' }).count()).to.equal(0);
    const box = await region.boundingBox();
    expect(box!.height).to.be.greaterThan(600);
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill(QUESTION);
    await input.press('Enter');
    const answer = await finishedAnswer(page!);
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    expect(await answer.locator('ol.sources li').allTextContents()).to.deep.equal(['Refund policy']);
    // Nothing refused by the page's Content-Security-Policy, nothing else went wrong.
    expect(problems).to.deep.equal([]);
    await screenshot('public-chat-page');

    const missing = await page!.goto(`${server!.url}/chat/no-such-shop`);
    expect(missing!.status()).to.equal(404);
    expect(await page!.locator('h1').textContent()).to.equal('Chat not found');
  });

  it('continues the conversation after a reload: the socket resumes it and shows its messages', async () => {
    await page!.goto(host!.url);
    await page!.locator('button.launcher').click();
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill(QUESTION);
    await input.press('Enter');
    await finishedAnswer(page!);
    const conversationId = await conversationOf(page!);
    await page!.reload();
    await page!.locator('button.launcher').click();
    await page!.locator('.msg.user', { hasText: QUESTION }).waitFor();
    const answer = await finishedAnswer(page!);
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    expect(await conversationOf(page!)).to.equal(conversationId);
  });

  it('erases the visitor’s conversation once they confirm: its messages go, in the log too, and a new conversation starts', async () => {
    await page!.goto(host!.url);
    await page!.locator('button.launcher').click();
    const erase = page!.getByRole('button', { name: 'Delete this conversation' });
    // Nothing to erase before the first message.
    expect(await erase.isHidden()).to.equal(true);
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill('I am Ines Costa and I want a refund');
    await input.press('Enter');
    await finishedAnswer(page!);
    const conversationId = await conversationOf(page!);
    // A lead left in it: erased with it.
    const leadButton = page!.getByRole('button', { name: 'Leave your contact details' });
    await leadButton.click();
    const leadForm = page!.getByRole('form', { name: 'Leave your contact details' });
    await leadForm.getByLabel('Name').fill('Ines Costa');
    await leadForm.getByLabel('Email').fill('ines@visitor.example');
    await leadForm.getByRole('button', { name: 'Send details' }).click();
    await page!.locator('.note', { hasText: 'Thank you! We will get back to you.' }).waitFor();
    expect(await leadButton.isHidden()).to.equal(true);

    await erase.click();
    const confirm = page!.getByRole('alertdialog', { name: 'Delete this conversation?' });
    await confirm.waitFor();
    // The safe choice has the focus, and keeps everything as it was.
    const keep = confirm.getByRole('button', { name: 'Keep it' });
    expect(await keep.evaluate(FOCUSED)).to.equal(true);
    await screenshot('erase-confirm');
    await keep.click();
    expect(await confirm.isHidden()).to.equal(true);
    expect(await page!.locator('.msg.user').count()).to.equal(1);

    await erase.click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await page!.locator('.note', { hasText: 'Your conversation was deleted.' }).waitFor();
    expect(await page!.locator('.msg.user').count()).to.equal(0);
    expect(await conversationOf(page!)).to.equal(null);
    expect(await erase.isHidden()).to.equal(true);
    // A new conversation: details may be left again.
    expect(await leadButton.isVisible()).to.equal(true);
    await screenshot('conversation-erased');
    const leads = await server!.request('GET', '/api/v1/tenant/leads', { headers: as(owner) });
    expect(JSON.stringify(leads.json)).to.not.include('ines@visitor.example');
    // Erased in the log, by the visitor: nothing of what they said opens any more.
    const events = (await server!.platform.eventStore.readStream(conversationStream(conversationId))) as DomainRecordedEvent[];
    expect(events[events.length - 1].type).to.equal('ConversationErased');
    expect(events[events.length - 1].metadata.actor.kind).to.equal('end_user');
    expect(JSON.stringify(events)).to.not.include('Ines Costa');

    // The next question starts a new conversation, over the socket resumed without the old one.
    await input.fill(QUESTION);
    await input.press('Enter');
    const answer = await finishedAnswer(page!);
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    const next = await conversationOf(page!);
    expect(next).to.be.a('string').and.not.equal(conversationId);
  });

  it('a conversation erased elsewhere (another tab) while the socket is open: the next message starts a new one and is answered', async () => {
    await page!.goto(host!.url);
    await page!.locator('button.launcher').click();
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill('First question, to be erased');
    await input.press('Enter');
    await finishedAnswer(page!);
    const conversationId = await conversationOf(page!);
    const visitorId: string = await page!.evaluate(`JSON.parse(localStorage.getItem(${JSON.stringify(`svc-widget:${token}`)})).visitor_id`);
    const erased = await server!.request('POST', `/api/v1/widget/conversations/${conversationId}/erase`, { headers: { authorization: `Bearer ${token}`, 'x-widget-visitor': visitorId, origin: host!.origin } });
    expect(erased.status, erased.text).to.equal(200);

    // The socket still holds the erased conversation: its turn is refused, and the widget sends the message again in a new one.
    await input.fill(QUESTION);
    await input.press('Enter');
    // The second answer on the page, once complete (the first is the erased conversation's, still shown).
    const answer = page!.locator('.msg.assistant[data-id]:not(.welcome)').nth(1);
    await answer.locator('.rate').waitFor();
    expect(await answer.locator('.text').textContent()).to.include('14 days');
    expect(await page!.getByRole('button', { name: 'Send' }).isEnabled()).to.equal(true);
    const next = await conversationOf(page!);
    expect(next).to.be.a('string').and.not.equal(conversationId);
    const events = await server!.platform.eventStore.readStream(conversationStream(next));
    expect(events.filter((event) => event.type === 'UserMessagePosted')).to.have.length(1);
  });

  it("verified identity: the host's backend signs its user id, identify() makes the visitor that user with their token, clearIdentity() signs them out", async () => {
    const secret = await server!.request('POST', '/api/v1/tenant/widget/identity-secret', { headers: as(owner) });
    expect(secret.status, secret.text).to.equal(201);
    const optional = await server!.request('POST', '/api/v1/tenant/widget', { headers: as(owner), body: { identity_verification: 'optional' } });
    expect(optional.status, optional.text).to.equal(200);
    // What the host's backend does (docs/widget.md, "Verified identity").
    const userHash = createHmac('sha256', secret.json.identity_secret).update('customer-42', 'utf8').digest('hex');
    const started = (events: DomainRecordedEvent[]) => (events.find((event) => event.type === 'ConversationStarted')!.data as { started_by: { kind: string; id: string } }).started_by;
    const postedTokens = (events: DomainRecordedEvent[]) =>
      events.filter((event) => event.type === 'UserMessagePosted').map((event) => (event.data as { end_user_token_sealed: string | null }).end_user_token_sealed);

    await page!.goto(host!.url);
    expect(await page!.evaluate('window.SvcWidget.ready')).to.equal(true);
    await page!.evaluate(`window.SvcWidget.identify(${JSON.stringify({ user_id: 'customer-42', user_hash: userHash, token: 'host-session-token', session: 'host-session' })})`);
    await page!.evaluate('window.SvcWidget.open()');
    const input = page!.getByRole('textbox', { name: 'Message' });
    await input.fill(QUESTION);
    await input.press('Enter');
    await finishedAnswer(page!);
    const signedIn = await conversationOf(page!);
    const signedInEvents = await server!.platform.eventStore.readStream(conversationStream(signedIn));
    expect(started(signedInEvents)).to.deep.equal({ kind: 'end_user', id: verifiedPartyId(server!.platform.secrets, owner.tenant_id, 'customer-42') });
    const [sealed] = postedTokens(signedInEvents);
    expect(server!.platform.secrets.open(sealed!)).to.equal('host-session-token');

    // The same user on another device (a browser with nothing stored): signed in, they are back in their conversation.
    const otherDevice = await browser!.newContext({ viewport: { width: 420, height: 800 } });
    try {
      const phone = await otherDevice.newPage();
      await phone.goto(host!.url);
      expect(await phone.evaluate('window.SvcWidget.ready')).to.equal(true);
      await phone.evaluate(`window.SvcWidget.identify(${JSON.stringify({ user_id: 'customer-42', user_hash: userHash })})`);
      await phone.evaluate('window.SvcWidget.open()');
      await phone.locator('.msg.user', { hasText: QUESTION }).waitFor();
      expect(await conversationOf(phone)).to.equal(signedIn);
      await screenshot('verified-identity-other-device', phone);
    } finally {
      await otherDevice.close();
    }

    // Sign-out on the host: the platform stops forwarding the token, and the page forgets the user's conversation.
    await page!.evaluate('window.SvcWidget.clearIdentity()');
    expect((await server!.platform.eventStore.readStream(conversationStream(signedIn))).map((event) => event.type)).to.include('EndUserIdentityCleared');
    expect(await page!.locator('.msg.user').count()).to.equal(0);
    await input.fill(QUESTION);
    await input.press('Enter');
    await finishedAnswer(page!);
    const anonymous = await conversationOf(page!);
    expect(anonymous).to.not.equal(signedIn);
    const anonymousEvents = await server!.platform.eventStore.readStream(conversationStream(anonymous));
    expect(started(anonymousEvents).id).to.match(/^visitor:/);
    expect(postedTokens(anonymousEvents)).to.deep.equal([null]);
    await screenshot('verified-identity-signed-out');
  });
});
