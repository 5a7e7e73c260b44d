import { expect } from 'chai';
import { tenantStream } from '../../domain/tenant/tenant';
import { newEvent } from '../support/events';
import { gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('public helpers (/api/v1/public)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    const owner = await registerOwner(server, 'brand-co');
    await gql(server, 'mutation { update_settings(input: { primary_color: "#ff8800", welcome_message: "Hi!" }) { primary_color } }', {}, owner.token);
  });
  after(() => server.close());

  it('GET /tenant-branding answers a tenant’s public branding by slug, without a token', async () => {
    const response = await server.request('GET', '/api/v1/public/tenant-branding?slug=brand-co');
    expect(response.status).to.equal(200);
    expect(response.json).to.deep.equal({ slug: 'brand-co', name: 'Org brand-co', display_name: 'Org brand-co', primary_color: '#ff8800', logo_url: null, welcome_message: 'Hi!' });
  });

  it('GET /tenant-branding never serves stored values today’s rules refuse: they are left out or fall back (#9.8)', async () => {
    const hostile = await registerOwner(server, 'stored-co');
    // Branding recorded before the text rule, as an older version could have stored it.
    const changes = { display_name: 'Acme\u202Ecod.exe', welcome_message: 'Hi\u0000<script>', logo_url: 'javascript:alert(1)', primary_color: 'red;}' };
    const { position } = await server.platform.eventStore.appendToStream(tenantStream(hostile.tenant_id), [
      newEvent('TenantBrandingChanged', { tenant_id: hostile.tenant_id, changes }),
    ]);
    await server.platform.readYourWrites(position);
    const response = await server.request('GET', '/api/v1/public/tenant-branding?slug=stored-co');
    expect(response.status).to.equal(200);
    expect(response.json).to.deep.equal({ slug: 'stored-co', name: 'Org stored-co', display_name: 'Org stored-co', primary_color: null, logo_url: null, welcome_message: null });
  });

  it('GET /tenant-branding answers 404 for an unknown slug and 400 without one', async () => {
    expect((await server.request('GET', '/api/v1/public/tenant-branding?slug=nope-co')).json.code).to.equal('tenant_not_found');
    expect((await server.request('GET', '/api/v1/public/tenant-branding')).json).to.deep.include({ code: 'invalid_request', field: 'slug' });
  });

  it('GET /tenant-slug-available tells taken, free, reserved and malformed slugs apart', async () => {
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=brand-co')).json).to.deep.equal({ slug: 'brand-co', available: false, reason: 'taken' });
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=fresh-co')).json).to.deep.equal({ slug: 'fresh-co', available: true });
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=admin')).json).to.deep.include({ available: false, reason: '"admin" is reserved' });
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=-x')).json.available).to.equal(false);
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available')).status).to.equal(400);
  });
});
