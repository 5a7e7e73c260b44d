import { expect } from 'chai';
import { MessagingError } from '../../application/ports/messaging';
import { OutboxMessaging } from '../../adapters/messaging/outbox';
import { WhatsAppCloudApiMessaging } from '../../adapters/messaging/whatsapp-cloud-api';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { type GraphApiServer, startGraphApi } from '../support/graph-api';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { MESSAGE, messagingContract } from './messaging.contract';

/** The operator's guard: the base URL is theirs, so a local server is allowed. */
const operatorGuard = (): GuardedOutboundHttp => new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });

describe('Messaging contract: the embedded outbox', () => {
  messagingContract(async () => ({ messaging: new OutboxMessaging(), expected: 'kept', dispose: async () => undefined }));
});

describe('Messaging contract: the WhatsApp Cloud API (a local server speaking its wire format)', () => {
  let graph: GraphApiServer;
  before(async () => {
    graph = await startGraphApi();
  });
  after(() => graph.close());

  const cloudApi = (baseUrl = graph.url, outbound = operatorGuard()): WhatsAppCloudApiMessaging => new WhatsAppCloudApiMessaging(outbound, { baseUrl, timeoutMs: 5000 });

  messagingContract(async () => ({ messaging: cloudApi(), expected: 'sent', dispose: async () => undefined }));

  async function refusal(send: Promise<unknown>): Promise<MessagingError> {
    const error = await send.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).to.be.instanceOf(MessagingError);
    return error as MessagingError;
  }

  it('POSTs Meta’s message shape to /<version>/<phone number id>/messages with the bearer token, and answers Meta’s message id', async () => {
    const before = graph.requests.length;
    const receipt = await cloudApi(`${graph.url}/`).sendText(MESSAGE);
    const [request] = graph.requests.slice(before);
    expect(request.method).to.equal('POST');
    expect(request.path).to.equal('/v23.0/106540352242922/messages');
    expect(request.headers).to.include({ authorization: `Bearer ${MESSAGE.from.access_token}`, 'content-type': 'application/json' });
    expect(JSON.parse(request.body.toString('utf8'))).to.deep.equal({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '16505551234',
      type: 'text',
      text: { preview_url: false, body: MESSAGE.text },
    });
    expect(receipt).to.deep.equal({ outcome: 'sent', transport: 'cloud_api', provider_message_id: graph.sent[graph.sent.length - 1], status_code: 200 });
  });

  it('refuses for good what Meta refuses for good (4xx), naming Meta’s code and never the token', async () => {
    graph.answerWith(400);
    const error = await refusal(cloudApi().sendText(MESSAGE));
    expect([error.statusCode, error.permanent]).to.deep.equal([400, true]);
    expect(error.message).to.include('131030').and.include('Recipient phone number not in allowed list');
    expect(error.message).to.not.include(MESSAGE.from.access_token!);
  });

  it('fails passingly on 429 and 5xx, and when nothing answers', async () => {
    for (const status of [429, 503]) {
      graph.answerWith(status);
      const error = await refusal(cloudApi().sendText(MESSAGE));
      expect([error.statusCode, error.permanent], String(status)).to.deep.equal([status, false]);
    }
    const gone = await startWebhookReceiver();
    await gone.close();
    const error = await refusal(cloudApi(gone.url).sendText(MESSAGE));
    expect([error.statusCode, error.permanent]).to.deep.equal([null, false]);
  });

  it('fails for good without an access token, or when the guard refuses the base URL', async () => {
    const before = graph.requests.length;
    expect((await refusal(cloudApi().sendText({ ...MESSAGE, from: { ...MESSAGE.from, access_token: null } }))).permanent).to.equal(true);
    const strict = new GuardedOutboundHttp({ allowInsecureUrls: false, allowPrivateNetworks: false });
    expect((await refusal(cloudApi(graph.url, strict).sendText(MESSAGE))).permanent).to.equal(true);
    expect(graph.requests.length).to.equal(before);
  });
});
