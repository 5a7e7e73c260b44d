import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { GENERATED_END, GENERATED_START, errorCatalogue, renderCatalogue, withCatalogue } from '../../adapters/http/openapi/error-catalogue';

// docs/errors.md lists every code the sources raise: a code added, removed or given another
// status without `npm run docs:errors` fails here.
describe('the error catalogue (docs/errors.md)', () => {
  const root = path.join(__dirname, '..', '..', '..');
  const catalogue = errorCatalogue(root);

  it('is the generated part of docs/errors.md, as the sources are now', () => {
    const document = fs.readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8');
    const written = document.slice(document.indexOf(GENERATED_START), document.indexOf(GENERATED_END));
    const current = withCatalogue(document, renderCatalogue(catalogue));
    expect(written, 'docs/errors.md is out of date: run npm run docs:errors').to.equal(current.slice(current.indexOf(GENERATED_START), current.indexOf(GENERATED_END)));
  });

  it('reads the codes of the domain, the use cases and the HTTP edge, with their statuses', () => {
    const statusesOf = (code: string) => catalogue.find((entry) => entry.code === code)?.statuses;
    expect(statusesOf('team_not_found')).to.deep.equal([404]);
    expect(statusesOf('read_model_behind')).to.deep.equal([503]);
    expect(statusesOf('quota_exceeded')).to.deep.equal([429]);
    expect(statusesOf('malformed_multipart')).to.deep.equal([400]);
    expect(statusesOf('internal_error')).to.deep.equal([500]);
    expect(statusesOf('tenant_suspended')).to.deep.equal([403, 409]);
    // Named in comments only, or by the connector SDK (which organizations run, not the platform).
    expect(statusesOf('code')).to.equal(undefined);
    expect(catalogue.find((entry) => entry.areas.includes('connector-sdk'))).to.equal(undefined);
    expect(catalogue.find((entry) => entry.code === 'team_not_found')?.example).to.equal('no such team');
  });
});
