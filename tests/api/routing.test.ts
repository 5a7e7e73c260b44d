// The HTTP app nests every area router in one root router: each path reaches its route, an
// area's own middleware runs for its paths only, a known path with another method is 405
// with its Allow header, an unknown method 501, and two routes for one method and path
// refuse to start.

import Router from '@koa/router';
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../application/ports/logger';
import { createHttpApp } from '../../adapters/http/server';
import { invalid } from '../../domain/shared/errors';

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

describe('HTTP routing', () => {
  let server: http.Server;
  let base: string;

  before(async () => {
    // The org area has middleware of its own (as authentication is in the real one).
    const org = new Router({ prefix: '/api/v1/org' });
    org.use((ctx, next) => {
      ctx.set('x-area', 'org');
      return next();
    });
    org.get('/thing', (ctx) => {
      ctx.body = { name: 'org area' };
    });
    org.delete('/thing', (ctx) => {
      ctx.status = 204;
    });
    server = http.createServer(
      app([
        answering(undefined, '/health', 'unprefixed'),
        org,
        answering('/api/v1/org/special', '/thing', 'nested area'),
        answering('/api/v1/organization', '/thing', 'look-alike area'),
      ]).callback(),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (path: string, method = 'GET') => {
    const response = await fetch(`${base}${path}`, { method });
    const text = await response.text();
    return {
      status: response.status,
      allow: response.headers.get('allow'),
      area: response.headers.get('x-area'),
      body: (text ? JSON.parse(text) : undefined) as { name?: string; code?: string; message?: string } | undefined,
    };
  };

  it('sends each path to its route, in whichever area router it is declared', async () => {
    expect((await call('/health')).body?.name).to.equal('unprefixed');
    expect((await call('/api/v1/org/thing')).body?.name).to.equal('org area');
    expect((await call('/api/v1/org/special/thing')).body?.name).to.equal('nested area');
    expect((await call('/api/v1/organization/thing')).body?.name).to.equal('look-alike area');
  });

  it("runs an area's middleware for that area's paths only", async () => {
    expect((await call('/api/v1/org/thing')).area).to.equal('org');
    expect((await call('/api/v1/organization/thing')).area).to.equal(null);
    expect((await call('/health')).area).to.equal(null);
  });

  it('answers 404 {code, message} for a path no route has', async () => {
    const missing = await call('/api/v1/org/nothing');
    expect(missing.status).to.equal(404);
    expect(missing.body?.code).to.equal('not_found');
  });

  it('answers 405 {code, message} with the Allow header for a known path and another method', async () => {
    const refused = await call('/api/v1/org/thing', 'PUT');
    expect(refused.status).to.equal(405);
    expect(refused.body?.code).to.equal('method_not_allowed');
    expect(refused.allow?.split(', ').sort()).to.deep.equal(['DELETE', 'GET', 'HEAD']);
    const unprefixed = await call('/health', 'POST');
    expect(unprefixed.status).to.equal(405);
    expect(unprefixed.allow?.split(', ').sort()).to.deep.equal(['GET', 'HEAD']);
  });

  it('answers 501 {code, message} for a method no route knows', async () => {
    const unknown = await call('/api/v1/org/thing', 'PROPFIND');
    expect(unknown.status).to.equal(501);
    expect(unknown.body?.code).to.equal('not_implemented');
  });

  it('refuses to start with two routes for one method and path', () => {
    expect(() => app([answering('/api/v1/org', '/a', 'one'), answering('/api/v1/org', '/a', 'two')])).to.throw(/two routes answer (GET|HEAD) \/api\/v1\/org\/a$/);
    expect(() => app([answering('/api/v1/org', '/a', 'one'), answering(undefined, '/api/v1/org/a', 'again')])).to.throw(/two routes answer (GET|HEAD) \/api\/v1\/org\/a$/);
    expect(() => app([answering('/api/v1/org', '/a', 'one'), answering('/api/v1/org', '/b', 'two')])).to.not.throw();
  });
});

// The root router remembers the layers of a static path it matched (server.ts); a request it
// answers from memory must go exactly where the first one went.
describe('HTTP routing, the same path again', () => {
  let server: http.Server;
  let base: string;
  const observed: string[] = [];
  let areaRuns = 0;

  before(async () => {
    const org = new Router({ prefix: '/api/v1/org' });
    org.use((_ctx, next) => {
      areaRuns += 1;
      return next();
    });
    org.get('/members', (ctx) => {
      ctx.body = { name: 'members', params: ctx.params };
    });
    org.get('/members/:id', (ctx) => {
      ctx.body = { name: 'member', params: ctx.params };
    });
    org.get('/broken', () => {
      throw invalid('bad_thing', 'this is refused', 'thing');
    });
    const metrics = { ...noMetrics, observeRequest: (method: string, route: string, status: number) => void observed.push(`${method} ${route} ${status}`) };
    server = http.createServer(createHttpApp({ logger: silentLogger, metrics, bodyLimitBytes: 1024, routers: [org] }).callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = async (path: string, method = 'GET') => {
    const response = await fetch(`${base}${path}`, { method });
    const text = await response.text();
    return { status: response.status, allow: response.headers.get('allow'), body: text ? JSON.parse(text) : undefined };
  };

  it('runs the same middleware and route, with the same route label, every time', async () => {
    observed.length = 0;
    areaRuns = 0;
    for (let i = 0; i < 3; i += 1) expect(await call('/api/v1/org/members')).to.deep.include({ status: 200, body: { name: 'members', params: {} } });
    expect(areaRuns).to.equal(3);
    expect(observed).to.deep.equal(Array(3).fill('GET /api/v1/org/members 200'));
  });

  it('matches a path with parameters anew for each value', async () => {
    expect((await call('/api/v1/org/members/a')).body).to.deep.equal({ name: 'member', params: { id: 'a' } });
    expect((await call('/api/v1/org/members/b')).body).to.deep.equal({ name: 'member', params: { id: 'b' } });
    expect((await call('/api/v1/org/members/a')).body).to.deep.equal({ name: 'member', params: { id: 'a' } });
  });

  it('still answers 405 with Allow, and 404, on and beside a remembered path', async () => {
    await call('/api/v1/org/members');
    const refused = await call('/api/v1/org/members', 'DELETE');
    expect(refused.status).to.equal(405);
    expect(refused.allow?.split(', ').sort()).to.deep.equal(['GET', 'HEAD']);
    expect((await call('/api/v1/org/members', 'DELETE')).status).to.equal(405);
    expect((await call('/api/v1/org/memberz')).status).to.equal(404);
    expect((await call('/api/v1/org/members', 'HEAD')).status).to.equal(200);
  });

  it('times and counts each request with the status its client gets, errors included', async () => {
    observed.length = 0;
    const refused = await call('/api/v1/org/broken');
    expect(refused).to.deep.include({ status: 400, body: { code: 'bad_thing', message: 'this is refused', field: 'thing' } });
    expect((await call('/api/v1/org/nothing')).body?.code).to.equal('not_found');
    expect(observed).to.deep.equal(['GET /api/v1/org/broken 400', 'GET unmatched 404']);
  });
});
