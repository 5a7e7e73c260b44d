import { expect } from 'chai';
import { createTenant } from '../../application/tenant/tenant-commands';
import { userContext } from '../support/context';
import { countingProjection } from '../support/counting-projection';
import { newEvent } from '../support/events';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { allProjections } from '../../projections/index';

describe('operations routes', () => {
  describe('with a metrics token', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ METRICS_AUTH_TOKEN: 'scrape-token-123' });
    });
    after(() => server.close());

    it('GET /health answers ok with a request id', async () => {
      const response = await server.request('GET', '/health');
      expect(response.status).to.equal(200);
      expect(response.json.status).to.equal('ok');
      expect(response.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });

    it('echoes an acceptable x-request-id and replaces a bad one', async () => {
      expect((await server.request('GET', '/health', { headers: { 'x-request-id': 'req-12345678' } })).headers.get('x-request-id')).to.equal('req-12345678');
      expect((await server.request('GET', '/health', { headers: { 'x-request-id': 'bad id!' } })).headers.get('x-request-id')).to.not.equal('bad id!');
    });

    it('GET /ready reports the stores and every projection', async () => {
      const response = await server.request('GET', '/ready');
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.include({ status: 'ready', event_store: 'ok', read_store: 'ok' });
      expect(response.json.projections.map((p: { name: string }) => p.name)).to.deep.equal(allProjections.map((p) => p.name));
    });

    it('GET /metrics refuses a missing or wrong token with 401', async () => {
      const missing = await server.request('GET', '/metrics');
      expect(missing.status).to.equal(401);
      expect(missing.json).to.deep.equal({ code: 'unauthorized', message: 'metrics need a bearer METRICS_AUTH_TOKEN' });
      const wrong = await server.request('GET', '/metrics', { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).to.equal(401);
    });

    it('GET /metrics serves HTTP, event store and projection metrics with the token', async () => {
      const created = await createTenant(server.platform.commands, { name: 'Acme', slug: 'acme' }, userContext());
      expect(await server.platform.readYourWrites(created.position)).to.equal(true);
      await server.request('GET', '/health');
      // A read of $all (a range replay's, a standby's catch-up; the audit anchoring's are on the projection thread's own connection).
      expect((await server.platform.eventStore.readAll({ fromPosition: 0, maxCount: 5 })).length).to.be.greaterThan(0);
      const response = await server.request('GET', '/metrics', { headers: { authorization: 'Bearer scrape-token-123' } });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/plain/);
      expect(response.text).to.match(/http_requests_total\{method="GET",route="\/health",status="200"\} \d+/);
      expect(response.text).to.match(/eventstore_appended_events_total \d+/);
      // The command read its stream; the read above read $all.
      expect(response.text).to.match(/eventstore_read_events_total\{source="stream"\} \d+/);
      expect(response.text).to.match(/eventstore_read_events_total\{source="all"\} [1-9]/);
      expect(response.text).to.match(/projection_lag_events\{projection="tenants"\} 0/);
      expect(response.text).to.match(/eventstore_head_position [1-9]/);
    });

    it('answers an unknown route with 404 {code, message}', async () => {
      const response = await server.request('GET', '/nope');
      expect(response.status).to.equal(404);
      expect(response.json).to.deep.equal({ code: 'not_found', message: 'no route for GET /nope' });
    });

    it('answers a wrong method with 405 {code, message}', async () => {
      const response = await server.request('DELETE', '/health');
      expect(response.status).to.equal(405);
      expect(response.json.code).to.equal('method_not_allowed');
    });

    it('answers malformed JSON with 400, never 500', async () => {
      const response = await server.request('POST', '/health', { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
      expect(response.status).to.equal(400);
      expect(response.json.code).to.equal('malformed_json');
    });

    it('answers a body of another content type with 415', async () => {
      const response = await server.request('POST', '/health', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(response.status).to.equal(415);
      expect(response.json.code).to.equal('unsupported_media_type');
    });

    it('answers an oversized body with 413', async () => {
      const response = await server.request('POST', '/health', { body: { blob: 'x'.repeat(1024 * 1024 + 10) } });
      expect(response.status).to.equal(413);
      expect(response.json.code).to.equal('payload_too_large');
    });
  });

  describe('with public metrics', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ METRICS_PUBLIC: 'true' });
    });
    after(() => server.close());

    it('GET /metrics needs no token', async () => {
      expect((await server.request('GET', '/metrics')).status).to.equal(200);
    });
  });

  describe('when a projection is failing', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({}, { projections: [countingProjection({ failOn: (type) => type === 'Poison' })] });
    });
    after(() => server.close());

    it('GET /ready answers 503 naming the projection and why it failed', async () => {
      await server.platform.eventStore.appendToStream('thing-1', [newEvent('Poison')]);
      await eventually(async () => (await server.request('GET', '/ready')).status === 503, 5000, 'not ready');
      const response = await server.request('GET', '/ready');
      expect(response.json.status).to.equal('not_ready');
      expect(response.json.projections).to.deep.equal([{ name: 'counters', status: 'failed', lag: response.json.projections[0].lag, holder: server.platform.projections.holder, error: 'cannot project Poison', ok: false }]);
    });
  });
});
