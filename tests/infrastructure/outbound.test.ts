// The SSRF guard and the signed POST (infrastructure/outbound): which addresses are refused,
// names checked when given and again on the call, and a body signed exactly as the connector
// SDK verifies connector requests (spec 5.2).

import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { verifySignature } from '../../adapters/connector-sdk/signing';
import { OutboundCallError } from '../../application/ports/outbound-http';
import { AddressGuard, REFUSED_ADDRESS_CODE, type Resolve, isRefusedAddress } from '../../infrastructure/outbound/address-guard';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { startWebhookReceiver } from '../support/webhook-receiver';

const strict = { allowInsecureUrls: false, allowPrivateNetworks: false };
const open = { allowInsecureUrls: true, allowPrivateNetworks: true };
/** A resolver that answers from a table, as DNS would. */
const resolving =
  (table: Record<string, string[]>): Resolve =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('outbound address guard', () => {
  it('refuses private, loopback, link-local, metadata and reserved addresses, IPv4 and IPv6, mapped forms included', () => {
    for (const address of [
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '127.0.0.1',
      '127.1.2.3',
      '0.0.0.0',
      '169.254.169.254',
      '100.100.100.200',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '100.64.0.1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      'ff02::1',
      'not an address',
    ]) {
      expect(isRefusedAddress(address), address).to.equal(true);
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) expect(isRefusedAddress(address), address).to.equal(false);
  });

  it('calls https only unless insecure URLs are allowed', async () => {
    const guard = new AddressGuard(strict, resolving({ 'desk.example.com': ['93.184.215.14'] }));
    expect(await guard.refusalOf('http://desk.example.com/hook')).to.include({ reason: 'insecure_url' });
    expect(await guard.refusalOf('ftp://desk.example.com/hook')).to.include({ reason: 'insecure_url' });
    expect(await guard.refusalOf('https://desk.example.com/hook')).to.equal(null);
    expect(await new AddressGuard({ ...strict, allowInsecureUrls: true }, resolving({ 'desk.example.com': ['93.184.215.14'] })).refusalOf('http://desk.example.com/hook')).to.equal(null);
  });

  it('refuses a URL that names or resolves to an inside address, unless private networks are allowed', async () => {
    const table = { 'desk.example.com': ['93.184.215.14'], 'inside.example.com': ['93.184.215.14', '10.0.0.7'], localhost: ['127.0.0.1', '::1'] };
    const guard = new AddressGuard(strict, resolving(table));
    for (const url of ['https://127.0.0.1/hook', 'https://[::1]/hook', 'https://[::ffff:127.0.0.1]/hook', 'https://169.254.169.254/latest/meta-data', 'https://2130706433/', 'https://localhost:8443/']) {
      expect(await guard.refusalOf(url), url).to.include({ reason: 'private_address' });
    }
    expect((await guard.refusalOf('https://inside.example.com/hook'))?.message).to.match(/inside\.example\.com resolves to 10\.0\.0\.7/);
    expect(await guard.refusalOf('https://93.184.215.14/hook')).to.equal(null);
    expect(await guard.refusalOf('https://nowhere.invalid/hook')).to.include({ reason: 'unresolvable_host' });
    expect(await new AddressGuard(open, resolving(table)).refusalOf('https://inside.example.com/hook')).to.equal(null);
  });
});

describe('outbound address guard: the address forms of issue 12', () => {
  // Each form names an inside address; WHATWG URL parsing turns the decimal, octal, hex and
  // short IPv4 forms into dotted quads before the guard looks, so none slips past as a "name".
  const insideForms = [
    'https://127.0.0.1/',
    'https://127.1/',
    'https://10.0.0.1/',
    'https://10.1/',
    'https://172.16.0.1/',
    'https://172.31.255.254/',
    'https://192.168.1.1/',
    'https://100.64.0.1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://0.0.0.0/',
    'https://255.255.255.255/',
    'https://224.0.0.1/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://017700000001/',
    'https://0300.0250.1.1/',
    'https://0x7f.0.0.1/',
    'https://0x7f000001/',
    'https://0xa9fea9fe/',
    'https://[::1]/',
    'https://[::]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'https://[fd00:ec2::254]/',
    'https://[fc00::1]/',
    'https://[fe80::1]/',
    'https://[ff02::1]/',
    'https://local.example.com/',
  ];
  const table = { 'local.example.com': ['127.0.0.1'] };

  it('refuses every one by default, the name resolving to 127.0.0.1 included', async () => {
    const guard = new AddressGuard(strict, resolving(table));
    for (const url of insideForms) expect(await guard.refusalOf(url), url).to.include({ reason: 'private_address' });
  });

  it('allows every one when private networks are allowed', async () => {
    const guard = new AddressGuard({ allowInsecureUrls: false, allowPrivateNetworks: true }, resolving(table));
    for (const url of insideForms) expect(await guard.refusalOf(url), url).to.equal(null);
  });

  it('lets the public neighbours of the private ranges through', async () => {
    const guard = new AddressGuard(strict, resolving({}));
    for (const url of ['https://172.15.255.255/', 'https://172.32.0.1/', 'https://11.0.0.1/', 'https://192.169.0.1/', 'https://100.128.0.1/', 'https://[2606:4700:4700::1111]/']) {
      expect(await guard.refusalOf(url), url).to.equal(null);
    }
  });

  it('refuses plain http by default, even to a public address, and allows it only when insecure URLs are allowed', async () => {
    expect(await new AddressGuard(strict, resolving({})).refusalOf('http://93.184.215.14/')).to.include({ reason: 'insecure_url' });
    expect(await new AddressGuard({ allowInsecureUrls: false, allowPrivateNetworks: true }, resolving({})).refusalOf('http://127.0.0.1/')).to.include({ reason: 'insecure_url' });
    expect(await new AddressGuard({ allowInsecureUrls: true, allowPrivateNetworks: false }, resolving({})).refusalOf('http://93.184.215.14/')).to.equal(null);
  });

  it('hands node:http a lookup that answers only checked addresses, so a rebound name never reaches a local server', async () => {
    const reached: string[] = [];
    const local = http.createServer((request, response) => {
      reached.push(request.url ?? '');
      response.end('inside');
    });
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    try {
      const port = (local.address() as AddressInfo).port;
      const answers = [['93.184.215.14'], ['127.0.0.1']];
      const resolutions: string[] = [];
      // Public on the first answer (the check), 127.0.0.1 on the second (the connection).
      const rebinding: Resolve = async (hostname) => {
        resolutions.push(hostname);
        return (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 }));
      };
      const guard = new AddressGuard({ allowInsecureUrls: true, allowPrivateNetworks: false }, rebinding);
      const url = `http://rebind.example.com:${port}/secret`;
      expect(await guard.refusalOf(url)).to.equal(null);
      const failure = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
        const request = http.get(url, { lookup: guard.lookup }, () => reject(new Error('the local server was reached')));
        request.on('error', resolve);
      });
      expect(failure.code).to.equal(REFUSED_ADDRESS_CODE);
      expect(resolutions).to.deep.equal(['rebind.example.com', 'rebind.example.com']);
      expect(reached).to.deep.equal([]);
    } finally {
      local.closeAllConnections();
      await new Promise<void>((resolve) => local.close(() => resolve()));
    }
  });
});

describe('signed outbound POST', () => {
  it('posts the body signed as spec 5.2 says: the connector SDK’s verifier accepts it', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const client = new GuardedOutboundHttp(open);
      const body = JSON.stringify({ type: 'conversation.handed_off', text: 'caf\u00e9' });
      const answer = await client.postSigned({ url: `${receiver.url}/hooks/handoff`, secret: 'a-secret-of-sixteen', body, timestampSeconds: 1_800_000_000, headers: { 'x-svc-delivery-id': 'd1' }, timeoutMs: 5000 });
      expect(answer.status).to.equal(200);
      const [delivery] = receiver.deliveries;
      expect(delivery.path).to.equal('/hooks/handoff');
      expect(delivery.body.toString('utf8')).to.equal(body);
      expect(delivery.headers).to.include({ 'content-type': 'application/json', 'x-svc-timestamp': '1800000000', 'x-svc-delivery-id': 'd1' });
      const check = verifySignature({
        secrets: ['a-secret-of-sixteen'],
        signature: delivery.headers['x-svc-signature'],
        timestamp: delivery.headers['x-svc-timestamp'],
        rawBody: delivery.body,
        nowSeconds: 1_800_000_000,
        maxSkewSeconds: 300,
      });
      expect(check).to.deep.equal({ valid: true, secretIndex: 0 });
      expect(verifySignature({ secrets: ['another-secret-16'], signature: delivery.headers['x-svc-signature'], timestamp: '1800000000', rawBody: delivery.body, nowSeconds: 1_800_000_000, maxSkewSeconds: 300 }).valid).to.equal(false);
    } finally {
      await receiver.close();
    }
  });

  it('answers any status as it came, and does not follow a redirect', async () => {
    const receiver = await startWebhookReceiver();
    const redirecting = http.createServer((_request, response) => {
      response.writeHead(302, { location: `${receiver.url}/elsewhere` });
      response.end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const client = new GuardedOutboundHttp(open);
      const post = (url: string) => client.postSigned({ url, secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 5000 });
      receiver.answerWith(500);
      expect(await post(receiver.url)).to.deep.equal({ status: 500 });
      expect(await post(`http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`)).to.deep.equal({ status: 302 });
      expect(receiver.deliveries.map((delivery) => delivery.path)).to.deep.equal(['/']);
    } finally {
      redirecting.closeAllConnections();
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
      await receiver.close();
    }
  });

  it('refuses on the call a name that resolves inside, even one checked before, and connects to the checked address', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const port = new URL(receiver.url).port;
      const answers = [['93.184.215.14'], ['127.0.0.1']];
      // The name pointed outside when it was checked, and inside when it is called (DNS rebinding).
      const rebinding: Resolve = async () => (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 }));
      const client = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: false }, rebinding);
      const url = `http://desk.example.com:${port}/hook`;
      expect(await client.refusalOf(url)).to.equal(null);
      const refused = await client.postSigned({ url, secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 5000 }).catch((error: unknown) => error);
      expect(refused).to.be.instanceOf(OutboundCallError);
      expect(refused).to.include({ reason: 'private_address' });
      const literal = await client.postSigned({ url: `http://127.0.0.1:${port}/hook`, secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 5000 }).catch((error: unknown) => error);
      expect(literal).to.include({ reason: 'private_address' });
      expect(receiver.deliveries).to.deep.equal([]);

      const allowed = new GuardedOutboundHttp(open, resolving({ 'desk.example.com': ['127.0.0.1'] }));
      expect(await allowed.postSigned({ url, secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 5000 })).to.deep.equal({ status: 200 });
      expect(receiver.deliveries).to.have.length(1);
    } finally {
      await receiver.close();
    }
  });

  it('gives up on an endpoint that does not answer in time, or cannot be reached', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const client = new GuardedOutboundHttp(open);
      const late = await client
        .postSigned({ url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 100 })
        .catch((error: unknown) => error);
      expect(late).to.be.instanceOf(OutboundCallError);
      expect(late).to.include({ reason: 'timeout' });
      const unresolvable = await new GuardedOutboundHttp(open, resolving({}))
        .postSigned({ url: 'https://nowhere.invalid/', secret: 'a-secret-of-sixteen', body: '{}', timestampSeconds: 1, headers: {}, timeoutMs: 5000 })
        .catch((error: unknown) => error);
      expect(unresolvable).to.include({ reason: 'unresolvable_host' });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe('guarded outbound request', () => {
  /** A local server whose handler the test gives; answers its URL. */
  async function serving(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
    const server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      async close() {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }
  const send = (client: GuardedOutboundHttp, url: string, over: Partial<Parameters<GuardedOutboundHttp['request']>[0]> = {}) =>
    client.request({ method: 'GET', url, headers: {}, body: null, timeoutMs: 5000, maxResponseBytes: 1024, ...over });

  it('sends the method, headers and body as given and answers the status, lowercased headers and the whole body', async () => {
    const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
    const api = await serving((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        response.setHeader('X-Pet', ['a', 'b']);
        response.writeHead(418, { 'Content-Type': 'application/json' });
        response.end('{"teapot":true}');
      });
    });
    try {
      const answer = await send(new GuardedOutboundHttp(open), `${api.url}/pets?x=1`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'X-Trace': 't-1' }, body: '{"name":"Rex"}' });
      expect(answer.status).to.equal(418);
      expect(answer.headers).to.include({ 'content-type': 'application/json', 'x-pet': 'a, b' });
      expect(answer.body.toString('utf8')).to.equal('{"teapot":true}');
      expect(seen).to.have.length(1);
      expect(seen[0]).to.deep.include({ method: 'PATCH', url: '/pets?x=1', body: '{"name":"Rex"}' });
      expect(seen[0].headers).to.include({ 'content-type': 'application/json', 'x-trace': 't-1', 'content-length': '14' });
    } finally {
      await api.close();
    }
  });

  it('sends a header value beyond Latin-1 as its UTF-8 bytes, and answers a request node:http cannot write as a network failure', async () => {
    const raw: Buffer[] = [];
    const api = await serving((request, response) => {
      raw.push(Buffer.from(request.rawHeaders[request.rawHeaders.indexOf('X-Note') + 1], 'latin1'));
      response.end();
    });
    try {
      const client = new GuardedOutboundHttp(open);
      expect((await send(client, api.url, { headers: { 'X-Note': 'prix en € ✓' } })).status).to.equal(200);
      expect(raw[0].toString('utf8')).to.equal('prix en € ✓');
      expect(await send(client, api.url, { headers: { 'X-Note': 'split\r\nX-Evil: 1' } }).catch((error: unknown) => error)).to.be.instanceOf(OutboundCallError).and.include({ reason: 'network' });
      expect(raw).to.have.length(1);
    } finally {
      await api.close();
    }
  });

  it('abandons an answer larger than the limit (response_too_large), and one broken off before its end (network)', async () => {
    const api = await serving((request, response) => {
      if (request.url === '/broken') {
        response.writeHead(200, { 'content-length': '100' });
        response.write('only a part');
        setImmediate(() => response.destroy());
        return;
      }
      response.writeHead(200);
      response.end('x'.repeat(4096));
    });
    try {
      const client = new GuardedOutboundHttp(open);
      expect(await send(client, `${api.url}/big`).catch((error: unknown) => error)).to.be.instanceOf(OutboundCallError).and.include({ reason: 'response_too_large' });
      expect((await send(client, `${api.url}/big`, { maxResponseBytes: 4096 })).body).to.have.length(4096);
      expect(await send(client, `${api.url}/broken`).catch((error: unknown) => error)).to.include({ reason: 'network' });
    } finally {
      await api.close();
    }
  });

  it('gives up on an answer that does not come in time (timeout)', async () => {
    const api = await serving(() => undefined);
    try {
      expect(await send(new GuardedOutboundHttp(open), api.url, { timeoutMs: 100 }).catch((error: unknown) => error)).to.include({ reason: 'timeout' });
    } finally {
      await api.close();
    }
  });

  it('answers a redirect as it came, without following it', async () => {
    const target = await startWebhookReceiver();
    const api = await serving((_request, response) => {
      response.writeHead(307, { location: `${target.url}/elsewhere` });
      response.end();
    });
    try {
      const answer = await send(new GuardedOutboundHttp(open), `${api.url}/moved`, { method: 'POST', body: '{}' });
      expect(answer.status).to.equal(307);
      expect(answer.headers.location).to.equal(`${target.url}/elsewhere`);
      expect(target.deliveries).to.deep.equal([]);
      expect(target.visits).to.deep.equal([]);
    } finally {
      await api.close();
      await target.close();
    }
  });

  it('refuses at connection time a name that resolves inside, even one checked before; and plain http or an inside literal without sending', async () => {
    const reached: string[] = [];
    const api = await serving((request, response) => {
      reached.push(request.url ?? '');
      response.end('inside');
    });
    try {
      const port = new URL(api.url).port;
      const answers = [['93.184.215.14'], ['127.0.0.1']];
      const rebinding: Resolve = async () => (answers.shift() ?? ['127.0.0.1']).map((address) => ({ address, family: 4 }));
      const client = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: false }, rebinding);
      const url = `http://api.example.com:${port}/secret`;
      expect(await client.refusalOf(url)).to.equal(null);
      expect(await send(client, url).catch((error: unknown) => error)).to.be.instanceOf(OutboundCallError).and.include({ reason: 'private_address' });
      expect(await send(client, `${api.url}/literal`).catch((error: unknown) => error)).to.include({ reason: 'private_address' });
      expect(await send(new GuardedOutboundHttp(strict), `${api.url}/plain`).catch((error: unknown) => error)).to.include({ reason: 'insecure_url' });
      expect(reached).to.deep.equal([]);
      expect((await send(new GuardedOutboundHttp(open, resolving({ 'api.example.com': ['127.0.0.1'] })), url)).body.toString('utf8')).to.equal('inside');
      expect(reached).to.deep.equal(['/secret']);
    } finally {
      await api.close();
    }
  });
  it('sends an idempotent request again on a fresh connection when its kept-alive one was reset, and a POST never', async () => {
    // Each connection answers its first request and keeps alive, then resets on its next one, as
    // a server that closed an idle connection (or crashed reading the request) does.
    let connections = 0;
    const received: string[] = [];
    const server = net.createServer((socket) => {
      connections += 1;
      let requests = 0;
      socket.on('data', (chunk: Buffer) => {
        requests += 1;
        received.push(chunk.toString('latin1').split(' ')[0]);
        if (requests > 1) {
          socket.resetAndDestroy();
          return;
        }
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const client = new GuardedOutboundHttp(open);
      const ask = (method: string) => client.request({ method, url, headers: {}, body: method === 'POST' ? '{}' : null, timeoutMs: 5000, maxResponseBytes: 1024 });
      expect((await ask('GET')).body.toString('utf8')).to.equal('ok');
      // The GET meets the reset on the kept-alive connection and is answered on a fresh one.
      expect((await ask('GET')).body.toString('utf8')).to.equal('ok');
      expect(connections).to.equal(2);
      // A POST on a kept-alive connection meets the reset too: it may have been read, so it is not sent again.
      expect((await ask('GET')).body.toString('utf8')).to.equal('ok');
      expect(await ask('POST').catch((error: unknown) => error)).to.be.instanceOf(OutboundCallError).and.to.include({ reason: 'network' });
      expect(connections).to.equal(3);
      expect(received).to.deep.equal(['GET', 'GET', 'GET', 'GET', 'POST']);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
