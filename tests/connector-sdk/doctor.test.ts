// The connector doctor: passes against the example connector, and names exactly the
// broken rules of a deliberately broken connector (no signature check, 405 on GET, no
// protocol headers), with a hint for each.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { runConnectorChecks, wrongPathUrl, type ConnectorServer } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { parseDoctorArguments, runConnectorDoctor } from '../../adapters/cli/connector-doctor';

const SECRET = 'doctor-secret';

/** A hand-written connector that gets three things wrong and everything else right. */
function startBrokenConnector(): Promise<http.Server> {
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // Broken: no X-Svc-* response headers.
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if ((request.url ?? '').split('?')[0] !== '/svc') return send(404, { error: 'not_found' });
      // Broken: 405 instead of 404 for other methods.
      if (request.method === 'GET') return send(405, { error: 'method_not_allowed' });
      if (request.method !== 'POST') return send(404, { error: 'not_found' });
      const protocol = request.headers['x-svc-protocol'];
      if (protocol !== undefined && protocol !== '1') return send(400, { type: 'error', code: 'protocol_mismatch', message: 'bad header' });
      // Broken: the signature and timestamp are never checked.
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(400, { type: 'error', code: 'invalid_request', message: 'bad json' });
      }
      if (body.protocol_version !== '1') return send(200, { type: 'error', code: 'protocol_mismatch', message: 'bad version' });
      switch (body.type) {
        case 'ping':
          return send(200, { type: 'pong' });
        case 'tools.list':
          return send(200, { type: 'tools.list', tools: [{ name: 'lookup', description: 'x', auth: 'none', chat: true, input_schema: { type: 'object' } }] });
        case 'capabilities.list':
          return send(200, { type: 'capabilities.list', tools: [], flows: [] });
        case 'tool.invoke':
          if (typeof body.tool !== 'string') return send(200, { type: 'error', code: 'invalid_request', message: 'tool required' });
          return send(200, { type: 'error', code: 'not_found', message: 'unknown tool' });
        default:
          return send(200, { type: 'error', code: 'invalid_request', message: 'unknown type' });
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const closeServer = (server: http.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('connector doctor', () => {
  let example: ConnectorServer;
  let broken: http.Server;
  let brokenUrl: string;

  before(async () => {
    example = await createExampleConnector({ signingSecret: SECRET, otpDelivery: { send: () => undefined } }).listen(0, '127.0.0.1');
    broken = await startBrokenConnector();
    brokenUrl = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/svc`;
  });

  after(async () => {
    await example.close();
    await closeServer(broken);
  });

  it('passes every check against the example connector', async () => {
    const results = await runConnectorChecks({ url: example.url, secret: SECRET });
    expect(results.filter((result) => !result.passed), JSON.stringify(results, null, 2)).to.deep.equal([]);
    expect(results.map((result) => result.name)).to.deep.equal([
      'signed ping answered by pong',
      'response headers',
      'capabilities.list shape',
      'tools.list shape',
      'wrong secret refused with 401',
      'stale timestamp (past) refused with 401',
      'stale timestamp (future) refused with 401',
      'wrong method answered 404',
      'wrong path answered 404',
      'protocol header mismatch answered 400',
      'body protocol_version mismatch answered protocol_mismatch',
      'unknown tool answered not_found',
      'tool.invoke without tool answered invalid_request',
    ]);
  });

  it('reports exactly the broken rules of a broken connector, each with a hint', async () => {
    const results = await runConnectorChecks({ url: brokenUrl, secret: SECRET });
    const failed = results.filter((result) => !result.passed);
    expect(failed.map((result) => result.name)).to.deep.equal([
      'response headers',
      'wrong secret refused with 401',
      'stale timestamp (past) refused with 401',
      'stale timestamp (future) refused with 401',
      'wrong method answered 404',
    ]);
    expect(failed[0].detail).to.include('x-svc-protocol missing');
    expect(failed[1].detail).to.include('got HTTP 200');
    expect(failed[4].detail).to.include('HTTP 405');
    for (const result of failed) expect(result.hint, result.name).to.be.a('string').and.not.equal('');
  });

  it('fails a connector on the wrong secret at the first check, with a hint about the secret', async () => {
    const results = await runConnectorChecks({ url: example.url, secret: 'not-the-secret' });
    expect(results[0]).to.include({ name: 'signed ping answered by pong', passed: false });
    expect(results[0].detail).to.include('401');
    expect(results[0].hint).to.include('secret');
  });

  it('reports an unreachable endpoint on every check', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = http.createServer();
      probe.listen(0, '127.0.0.1', () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const results = await runConnectorChecks({ url: `http://127.0.0.1:${closed}/svc`, secret: SECRET, timeoutMs: 2000 });
    expect(results.every((result) => !result.passed)).to.equal(true);
    expect(results[0].detail).to.include('ECONNREFUSED');
  });

  it('derives the wrong-path probe from the endpoint URL', () => {
    expect(wrongPathUrl('https://connector.example.com/svc')).to.equal('https://connector.example.com/svc-doctor-probe');
    expect(wrongPathUrl('https://connector.example.com/hooks/svc/')).to.equal('https://connector.example.com/hooks/svc-doctor-probe');
    expect(wrongPathUrl('https://connector.example.com')).to.equal('https://connector.example.com/doctor-probe');
  });

  describe('CLI', () => {
    it('prints every check and exits 0 against the example connector', async () => {
      const lines: string[] = [];
      expect(await runConnectorDoctor([example.url, '--secret', SECRET], (line) => lines.push(line))).to.equal(0);
      expect(lines.filter((line) => line.includes('PASS'))).to.have.length(13);
      expect(lines[lines.length - 1]).to.equal('all 13 checks passed');
    });

    it('prints failures with fix hints and exits 1 against the broken connector', async () => {
      const lines: string[] = [];
      expect(await runConnectorDoctor([brokenUrl, `--secret=${SECRET}`], (line) => lines.push(line))).to.equal(1);
      expect(lines.filter((line) => line.includes('FAIL'))).to.have.length(5);
      expect(lines.filter((line) => line.trim().startsWith('hint:'))).to.have.length(5);
      expect(lines.some((line) => line.includes('FAIL  wrong method answered 404'))).to.equal(true);
      expect(lines[lines.length - 1]).to.equal('5 of 13 checks failed');
    });

    it('answers usage mistakes with exit code 2', async () => {
      const lines: string[] = [];
      expect(await runConnectorDoctor([], (line) => lines.push(line))).to.equal(2);
      expect(lines[0]).to.include('missing endpoint URL');
      expect(await runConnectorDoctor(['ftp://x/svc', '--secret', 's'], () => undefined)).to.equal(2);
      expect(await runConnectorDoctor(['https://x/svc', '--bogus'], () => undefined)).to.equal(2);
      expect(await runConnectorDoctor(['--help'], () => undefined)).to.equal(0);
    });

    it('reads the secret from --secret, --secret= or SVC_SIGNING_SECRET', () => {
      expect(parseDoctorArguments(['https://x/svc', '--secret', 'a'], {})).to.deep.include({ secret: 'a' });
      expect(parseDoctorArguments(['https://x/svc', '--secret=b'], {})).to.deep.include({ secret: 'b' });
      expect(parseDoctorArguments(['https://x/svc'], { SVC_SIGNING_SECRET: 'c' })).to.deep.include({ secret: 'c' });
      expect(parseDoctorArguments(['https://x/svc'], {})).to.equal('missing --secret (or SVC_SIGNING_SECRET)');
      expect(parseDoctorArguments(['https://x/svc', '--secret', 'a', '--timeout', '500'], {})).to.deep.include({ timeoutMs: 500 });
    });
  });
});
