// Names and titles over HTTP: each entry point refuses control, bidi-override and lone-surrogate
// characters with 400 naming the field and changes nothing, and stores the NFC form, so two
// spellings of one name are one name.

import { expect } from 'chai';
import { type Account, PASSWORD, REGISTER, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const DECOMPOSED = 'Cafe\u0301';
const COMPOSED = 'Caf\u00e9';

describe('names and titles refuse hostile text (domain/shared/text.ts)', () => {
  let server: TestServer;
  let owner: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'text-org');
  });
  after(() => server.close());

  describe('POST /api/v1/org/teams', () => {
    it('answers 400 naming the field for a NUL byte, a bidi override and a lone surrogate, and records nothing', async () => {
      for (const [name, message] of [
        ['Sales\u0000', /control character \(U\+0000\)/],
        ['Sales\u202Etxt', /bidirectional override character \(U\+202E\)/],
        ['Sales\uD800', /lone surrogate/],
      ] as const) {
        const response = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name } });
        expect(response.status, JSON.stringify(name)).to.equal(400);
        expect(response.json).to.deep.include({ code: 'invalid_request', field: 'name' });
        expect(response.json.message).to.match(message);
        expect(await response.events()).to.deep.equal([]);
      }
      const teams = await server.request('GET', '/api/v1/org/teams', { headers: as(owner) });
      expect(teams.json.items).to.deep.equal([]);
    });

    it('stores the NFC form, so a decomposed spelling of a taken name is taken', async () => {
      const created = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: ` ${DECOMPOSED} ` } });
      expect(created.status).to.equal(201);
      expect(created.json.name).to.equal(COMPOSED);
      expect((await created.events()).map((event) => event.split('@')[0])).to.deep.equal(['ReservationClaimed', 'TeamCreated']);
      const [event] = await server.platform.eventStore.readStream(`team-${created.json.id}`);
      expect(event.data).to.deep.include({ name: COMPOSED });
      const again = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: COMPOSED } });
      expect(again.status).to.equal(409);
      expect(again.json.code).to.equal('team_name_taken');
    });
  });

  describe('register (GraphQL)', () => {
    const register = (variables: Record<string, unknown>) =>
      gql(server, REGISTER, { email: 'nul@example.com', password: PASSWORD, name: 'Ada', organization_name: 'Nul Org', slug: 'nul-org', ...variables });

    it('refuses a hostile name or organization_name with invalid_name naming the field, and claims nothing', async () => {
      for (const [field, value] of [
        ['name', 'Ada\u0000'],
        ['name', 'Ada\u202E'],
        ['organization_name', 'Nul\u0007 Org'],
        ['organization_name', 'Org\uDC00'],
      ] as const) {
        const response = await register({ [field]: value });
        expect(response.json.data, `${field} ${JSON.stringify(value)}`).to.equal(null);
        expect(response.json.errors[0].extensions, `${field} ${JSON.stringify(value)}`).to.deep.equal({ code: 'invalid_name', status: 400, field });
        expect(await response.events()).to.deep.equal([]);
      }
      // Neither the email nor the slug was reserved by the refused attempts.
      const accepted = await register({ name: DECOMPOSED, organization_name: `${DECOMPOSED} Org` });
      expect(accepted.json.errors).to.equal(undefined);
      const { user_id, tenant_id } = accepted.json.data.register;
      const [user] = await server.platform.eventStore.readStream(`user-${user_id}`);
      expect(user.data).to.deep.include({ name: COMPOSED });
      const [tenant] = await server.platform.eventStore.readStream(`tenant-${tenant_id}`);
      expect(tenant.data).to.deep.include({ name: `${COMPOSED} Org` });
    });
  });

  describe('rename_workspace (GraphQL)', () => {
    const RENAME = 'mutation ($id: ID!, $name: String!) { rename_workspace(id: $id, name: $name) { name } }';

    it('refuses a hostile name with invalid_name and keeps the old one; stores the NFC form', async () => {
      const created = await gql(server, 'mutation { create_workspace(name: "Docs") { id } }', {}, owner.token);
      const id = created.json.data.create_workspace.id;
      const refused = await gql(server, RENAME, { id, name: 'Docs\u0000' }, owner.token);
      expect(refused.json.errors[0].extensions).to.deep.equal({ code: 'invalid_name', status: 400, field: 'name' });
      expect(await refused.events()).to.deep.equal([]);
      const renamed = await gql(server, RENAME, { id, name: DECOMPOSED }, owner.token);
      expect(renamed.json.data.rename_workspace.name).to.equal(COMPOSED);
      const events = await server.platform.eventStore.readStream(`workspace-${id}`);
      expect(events.map((event) => [event.type, (event.data as { name: string }).name])).to.deep.equal([
        ['WorkspaceCreated', 'Docs'],
        ['WorkspaceRenamed', COMPOSED],
      ]);
    });
  });

  describe('update_settings (GraphQL)', () => {
    it('refuses a display name with a bidi override, naming display_name', async () => {
      const refused = await gql(server, 'mutation ($name: String!) { update_settings(input: { display_name: $name }) { display_name } }', { name: 'Acme\u202Ecod.exe' }, owner.token);
      expect(refused.json.errors[0].extensions).to.deep.equal({ code: 'invalid_branding', status: 400, field: 'display_name' });
    });
  });
});
