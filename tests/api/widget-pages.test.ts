// GET /widget.js and GET /chat/{slug}: the embeddable widget script (content type, caching,
// ETag revalidation, gzip, size budget) and the public chat page (branding, the publishable
// widget token, 404 pages for unknown, suspended and deleted organizations, escaping).

import { gunzipSync, gzipSync } from 'node:zlib';
import http from 'node:http';
import { expect } from 'chai';
import { WIDGET_GZIP_BUDGET_BYTES } from '../../adapters/widget-client/bundle';
import { deleteTenant, suspendTenant } from '../../application/tenant/tenant-commands';
import { userContext } from '../support/context';
import { type Account, gql, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const UPDATE_SETTINGS = `mutation ($input: UpdateSettingsInput!) { update_settings(input: $input) { display_name } }`;

/** A raw GET (fetch would decompress and drop Content-Encoding). */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

describe('the widget script and the public chat page', () => {
  let server: TestServer;
  let owner: Account;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'page-org');
  });
  after(() => server.close());

  describe('GET /widget.js', () => {
    it('is public JavaScript with a short cache lifetime and an ETag', async () => {
      const response = await server.request('GET', '/widget.js', { headers: { origin: 'https://any-site.example' } });
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
      expect(response.headers.get('cache-control')).to.equal('public, max-age=300');
      expect(response.headers.get('etag')).to.match(/^"[A-Za-z0-9_-]{27}"$/);
      expect(response.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(response.text).to.include('SvcWidget');
      expect(response.text).to.include('/ws/chat?token=');
    });

    it('answers 304 without a body to If-None-Match with its ETag, and the script again to another', async () => {
      const first = await server.request('GET', '/widget.js');
      const etag = first.headers.get('etag')!;
      const again = await server.request('GET', '/widget.js', { headers: { 'if-none-match': etag } });
      expect(again.status).to.equal(304);
      expect(again.text).to.equal('');
      expect(again.headers.get('etag')).to.equal(etag);
      const stale = await server.request('GET', '/widget.js', { headers: { 'if-none-match': '"an-older-version"' } });
      expect(stale.status).to.equal(200);
      expect(stale.text).to.equal(first.text);
    });

    it('is gzipped for a browser that takes gzip, and weighs under 30 KB that way', async () => {
      const gzipped = await rawGet(`${server.url}/widget.js`, { 'accept-encoding': 'gzip, deflate, br' });
      expect(gzipped.status).to.equal(200);
      expect(gzipped.headers['content-encoding']).to.equal('gzip');
      expect(gzipped.headers.vary).to.match(/Accept-Encoding/i);
      const plain = await rawGet(`${server.url}/widget.js`, { 'accept-encoding': 'identity' });
      expect(plain.headers['content-encoding']).to.equal(undefined);
      expect(gunzipSync(gzipped.body).equals(plain.body)).to.equal(true);
      expect(gzipped.body.length).to.be.below(WIDGET_GZIP_BUDGET_BYTES);
      // The build's own measure (gzip -9) agrees.
      expect(gzipSync(plain.body, { level: 9 }).length).to.be.below(WIDGET_GZIP_BUDGET_BYTES);
    });
  });

  describe('GET /chat/{slug}', () => {
    const operator = (tenantId: string) => userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: tenantId });

    async function settings(account: Account, input: Record<string, unknown>): Promise<void> {
      const updated = await gql(server, UPDATE_SETTINGS, { input }, account.token);
      expect(updated.json.errors, JSON.stringify(updated.json.errors)).to.equal(undefined);
    }

    function expectNotFoundPage(response: Awaited<ReturnType<TestServer['request']>>): void {
      expect(response.status).to.equal(404);
      expect(response.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(response.text).to.match(/^<!doctype html>/);
      expect(response.text).to.include('<h1>Chat not found</h1>');
      expect(response.text).to.not.include('widget.js');
    }

    it("is the organization's branded page loading widget.js in full-page mode with its widget token", async () => {
      await settings(owner, { display_name: 'Page & Co', primary_color: '#0a7d4f', logo_url: 'https://cdn.page.example/logo.png' });
      const token = await widgetTokenOf(server, owner);
      const response = await server.request('GET', '/chat/page-org');
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).to.equal('no-cache');
      expect(response.text).to.include('<title>Chat with Page &amp; Co</title>');
      expect(response.text).to.include('<h1 id="name">Page &amp; Co</h1>');
      expect(response.text).to.include('<img src="https://cdn.page.example/logo.png" alt="Page &amp; Co" id="logo">');
      expect(response.text).to.include('border-top:4px solid #0a7d4f');
      expect(response.text).to.include(`<script src="/widget.js" data-token="${token}" data-mode="page" data-container="svc-chat" defer></script>`);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).to.include("script-src 'self'");
      expect(csp).to.include("connect-src 'self'");
      expect(csp).to.match(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
      expect(csp).to.not.include('unsafe-inline');
      // The slug is matched whatever its case.
      expect((await server.request('GET', '/chat/PAGE-ORG')).status).to.equal(200);
    });

    it('escapes every value the organization wrote', async () => {
      const tricky = await registerOwner(server, 'tricky-org');
      await settings(tricky, { display_name: '<script>alert(1)</script> "Quoted" & \'single\'', logo_url: 'https://cdn.example/x.png?a=1&b="><script>alert(2)</script>' });
      const response = await server.request('GET', '/chat/tricky-org');
      expect(response.status).to.equal(200);
      expect(response.text).to.not.include('<script>alert');
      expect(response.text).to.include('<h1 id="name">&lt;script&gt;alert(1)&lt;/script&gt; &quot;Quoted&quot; &amp; &#39;single&#39;</h1>');
      expect(response.text).to.include('src="https://cdn.example/x.png?a=1&amp;b=&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;"');
      // The one script of the page is widget.js.
      expect(response.text.match(/<script/g)).to.have.length(1);
    });

    it('is the 404 page for an unknown slug, or a path that is no slug', async () => {
      expectNotFoundPage(await server.request('GET', '/chat/no-such-org'));
      expectNotFoundPage(await server.request('GET', '/chat/x'));
      expectNotFoundPage(await server.request('GET', `/chat/${encodeURIComponent('<b>org</b>')}`));
    });

    it('is the 404 page for a suspended organization, a deleted one, and one whose widget is off', async () => {
      const suspended = await registerOwner(server, 'suspended-page-org');
      expect((await server.request('GET', '/chat/suspended-page-org')).status).to.equal(200);
      await server.platform.readYourWrites((await suspendTenant(server.platform.commands, suspended.tenant_id, 'unpaid invoices', operator(suspended.tenant_id))).position);
      expectNotFoundPage(await server.request('GET', '/chat/suspended-page-org'));

      const deleted = await registerOwner(server, 'deleted-page-org');
      await server.platform.readYourWrites((await deleteTenant(server.platform.commands, deleted.tenant_id, operator(deleted.tenant_id))).position);
      expectNotFoundPage(await server.request('GET', '/chat/deleted-page-org'));

      const off = await registerOwner(server, 'widget-off-org');
      await settings(off, { widget_enabled: false });
      expectNotFoundPage(await server.request('GET', '/chat/widget-off-org'));
    });
  });
});
