import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configurationVariables } from '../../infrastructure/config/config';

// README.md's configuration table is what operators read: a variable the code reads and the
// table does not list, or lists with another default, is a setting nobody can find.
describe("README's configuration table", () => {
  const readme = readFileSync(join(__dirname, '..', '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'));
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  /** The row whose first cell names the variable (some rows name two). */
  const rowOf = (name: string): string[] | undefined =>
    rows.map((row) => row.split(' | ')).find((cells) => cells[0]!.replace(/^\| /, '').split(', ').includes(`\`${name}\``));

  it('lists every variable the platform reads', () => {
    const missing = configurationVariables().filter(({ name }) => rowOf(name) === undefined).map(({ name }) => name);
    expect(missing).to.deep.equal([]);
  });

  it('gives each variable the default the code has', () => {
    const different = configurationVariables()
      .filter((variable) => variable.default !== undefined && !rowOf(variable.name)?.[1]?.includes(`\`${variable.default}\``))
      .map((variable) => `${variable.name}: ${variable.default}`);
    expect(different).to.deep.equal([]);
  });
});
