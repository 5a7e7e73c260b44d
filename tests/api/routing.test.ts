// The HTTP app hands each request to the router whose prefix starts its path, and refuses
// to start with routes that could never be reached.

import Router from '@koa/router';
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../application/ports/logger';
import { createHttpApp } from '../../adapters/http/server';

const noMetrics = { observeRequest: () => undefined, render: async () => ({ contentType: 'text/plain', body: '' }) };

function app(routers: Router[]) {
  return createHttpApp({ logger: silentLogger, metrics: noMetrics, bodyLimitBytes: 1024, routers });
}

function answering(prefix: string | undefined, path: string, name: string): Router {
  const router = new Router(prefix ? { prefix } : {});
  router.get(path, (ctx) => {
    ctx.body = { name };
  });
  return router;
}

describe('HTTP routing by area prefix', () => {
  let server: http.Server;
  let base: string;

  before(async () => {
    const nested = answering('/api/v1/org/special', '/thing', 'nested area');
    server = http.createServer(
      app([answering(undefined, '/health', 'unprefixed'), answering('/api/v1/org', '/thing', 'org area'), nested, answering('/api/v1/organization', '/thing', 'look-alike area')]).callback(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const nameAt = async (path: string) => {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, body: (await response.json()) as { name?: string; code?: string } };
  };

  it('sends each path to the area whose prefix starts it, the longest prefix first', async () => {
    expect(await nameAt('/health')).to.deep.equal({ status: 200, body: { name: 'unprefixed' } });
    expect(await nameAt('/api/v1/org/thing')).to.deep.equal({ status: 200, body: { name: 'org area' } });
    expect(await nameAt('/api/v1/org/special/thing')).to.deep.equal({ status: 200, body: { name: 'nested area' } });
    expect(await nameAt('/api/v1/organization/thing')).to.deep.equal({ status: 200, body: { name: 'look-alike area' } });
  });

  it('answers 404 {code, message} for a path of an area that has no such route', async () => {
    const missing = await nameAt('/api/v1/org/nothing');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('not_found');
  });

  it('refuses to start with two routers on one prefix, or a route hidden under another prefix', () => {
    expect(() => app([answering('/api/v1/org', '/a', 'one'), answering('/api/v1/org', '/b', 'two')])).to.throw('two routers share the prefix /api/v1/org');
    expect(() => app([answering('/api/v1/org', '/a', 'one'), answering(undefined, '/api/v1/org/b', 'hidden')])).to.throw('lies under the prefix /api/v1/org');
  });
});
