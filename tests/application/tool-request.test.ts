// The pure parts of a tool call: the request built from a tool's mapping, and the redaction
// of what is recorded of it.

import { expect } from 'chai';
import { REDACTED, Redaction } from '../../application/tool-call/redaction';
import { buildToolRequest } from '../../application/tool-call/tool-request';

describe('a tool call’s request (buildToolRequest)', () => {
  const integration = { base_url: 'https://api.example.com/v1/?tenant=acme', default_headers: { 'X-Shop': 'north', Accept: 'text/plain' } };
  const none = { headers: {}, query: {} };

  it('encodes a path argument as one segment, repeats array query parameters, keeps the base URL’s query, and lowercases headers', () => {
    const built = buildToolRequest(
      {
        method: 'GET',
        path: '/orders/{id}/lines',
        parameters: [
          { argument: 'id', in: 'path', name: 'id' },
          { argument: 'status', in: 'query', name: 'status' },
          { argument: 'shop', in: 'header', name: 'X-Shop' },
        ],
      },
      { id: '../admin?x=1', status: ['open', 'late'], shop: 'south', page: 2, filter: { a: 1 }, skipped: null },
      integration,
      none,
    );
    expect(built).to.deep.equal({
      request: {
        method: 'GET',
        url: 'https://api.example.com/v1/orders/..%2Fadmin%3Fx%3D1/lines?tenant=acme&status=open&status=late&page=2&filter=%7B%22a%22%3A1%7D',
        headers: { 'x-shop': 'south', accept: 'text/plain', 'user-agent': 'svc-platform-tools/1' },
        body: null,
      },
    });
  });

  it('lets the platform’s query parameters and headers win over arguments of the same name', () => {
    const built = buildToolRequest(
      { method: 'POST', path: '/pets', parameters: [{ argument: 'key', in: 'query', name: 'api_key' }, { argument: 'auth', in: 'header', name: 'X-Api-Key' }] },
      { key: 'from-the-model', auth: 'from-the-model', name: 'Rex' },
      integration,
      { headers: { 'X-Api-Key': 'the-secret', 'x-end-user-token': 'eu' }, query: { api_key: 'the-secret' } },
    );
    if (!('request' in built)) throw new Error('expected a request');
    expect(built.request.url).to.equal('https://api.example.com/v1/pets?tenant=acme&api_key=the-secret');
    expect(built.request.headers).to.include({ 'x-api-key': 'the-secret', 'x-end-user-token': 'eu', 'content-type': 'application/json' });
    expect(built.request.body).to.equal('{"name":"Rex"}');
  });

  it('refuses a path argument that would climb the path (. or ..) or vanish (empty)', () => {
    for (const id of ['..', '.', '']) {
      expect(buildToolRequest({ method: 'GET', path: '/orders/{id}', parameters: [{ argument: 'id', in: 'path', name: 'id' }] }, { id }, integration, none), id).to.deep.equal({
        problems: [{ field: 'arguments.id', message: 'must not be empty, . or .. (it is a segment of the path)' }],
      });
    }
    expect(new URL('https://api.example.com/v1/orders/%2e%2e/admin').pathname).to.equal('/v1/admin');
  });

  it('lists every argument it cannot place: a missing path argument, a header value with a control character', () => {
    const built = buildToolRequest(
      {
        method: 'DELETE',
        path: '/a/{x}/b/{y}',
        parameters: [
          { argument: 'x', in: 'path', name: 'x' },
          { argument: 'y', in: 'path', name: 'y' },
          { argument: 'h', in: 'header', name: 'X-H' },
        ],
      },
      { x: null, h: 'a\nb' },
      integration,
      none,
    );
    expect(built).to.deep.equal({
      problems: [
        { field: 'arguments.x', message: 'is required: it is the {x} of the path' },
        { field: 'arguments.y', message: 'is required: it is the {y} of the path' },
        { field: 'arguments.h', message: 'must not contain control characters (it is sent as a header)' },
      ],
    });
  });
});

describe('redaction of a tool call’s exchange', () => {
  const secret = 'k3y "with" / spaces & more';
  const redaction = new Redaction([secret, 'tok-1'], { headers: ['X-Api-Key'], query: ['api_key'] });

  it('blanks credential headers by name, whatever they hold, and secrets anywhere in other headers', () => {
    expect(redaction.headers({ Authorization: 'Basic Zm9v', cookie: 'a=b', 'set-cookie': 'sid=1', 'x-api-key': 'anything', 'x-end-user-token': 'eu', 'x-echo': `got tok-1`, accept: 'application/json' })).to.deep.equal({
      Authorization: REDACTED,
      cookie: REDACTED,
      'set-cookie': REDACTED,
      'x-api-key': REDACTED,
      'x-end-user-token': REDACTED,
      'x-echo': `got ${REDACTED}`,
      accept: 'application/json',
    });
  });

  it('finds a secret as sent, percent-encoded, form-encoded and JSON-escaped', () => {
    expect(redaction.text(`raw ${secret}`)).to.equal(`raw ${REDACTED}`);
    expect(redaction.text(`url ${encodeURIComponent(secret)}`)).to.equal(`url ${REDACTED}`);
    expect(redaction.text(`form ${new URLSearchParams({ s: secret }).toString().slice(2)}`)).to.equal(`form ${REDACTED}`);
    expect(redaction.text(JSON.stringify({ echoed: secret }))).to.equal(`{"echoed":"${REDACTED}"}`);
  });

  it('blanks the API key’s query parameter by name, and secrets in the rest of the URL', () => {
    expect(redaction.url('https://api.example.com/p/tok-1?api_key=whatever&q=1&api%5Fkey=again')).to.equal(`https://api.example.com/p/${REDACTED}?api_key=${REDACTED}&q=1&api%5Fkey=${REDACTED}`);
    expect(new Redaction([]).url('https://api.example.com/?api_key=x')).to.equal('https://api.example.com/?api_key=x');
  });
});
