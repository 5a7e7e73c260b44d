import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../../adapters/http/openapi/document';

// docs/release-notes.md is what integrators read to learn what a release added: a route it
// names that the API does not answer (renamed, or mistyped) is a promise nobody can use.
describe('the release notes (docs/release-notes.md)', () => {
  const notes = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'release-notes.md'), 'utf8');
  const described = new Set(Object.entries(openApiDocument().paths as Record<string, Record<string, unknown>>).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)));

  it('names only routes the API describes', () => {
    // `GET /a`, `GET, DELETE /a/{id}`: every method with its path.
    const named = [...notes.matchAll(/`((?:GET|POST|PUT|PATCH|DELETE|OPTIONS)(?:, (?:GET|POST|PUT|PATCH|DELETE|OPTIONS))*) (\/[^`\s]*)`/g)].flatMap(([, methods, path]) =>
      methods!.split(', ').map((method) => `${method} ${path}`),
    );
    expect(named.length).to.be.greaterThan(30);
    expect(named.filter((route) => !described.has(route))).to.deep.equal([]);
  });
});
