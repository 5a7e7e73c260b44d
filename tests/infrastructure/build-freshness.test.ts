// The run scripts (`npm start`, `npm run cli`, ...) build first only when dist/ is not as new
// as the sources: infrastructure/build/freshness.cjs, run here on a tree of its own.

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

const SCRIPT = path.resolve(__dirname, '../../../infrastructure/build/freshness.cjs');

describe('the build freshness check of the run scripts', () => {
  let root: string;
  const source = (): string => path.join(root, 'domain', 'tenant.ts');
  const check = (argument?: string): { status: number | null; stderr: string } => {
    const result = spawnSync(process.execPath, [path.join(root, 'infrastructure', 'build', 'freshness.cjs'), ...(argument ? [argument] : [])], { encoding: 'utf8' });
    return { status: result.status, stderr: result.stderr };
  };
  /** Sets a file's modification time `seconds` from now. */
  const touch = (file: string, seconds: number): void => {
    const at = new Date(Date.now() + seconds * 1000);
    utimesSync(file, at, at);
  };
  const build = (): void => {
    expect(check('--starting').status).to.equal(0);
    expect(check('--built').status).to.equal(0);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'svc-freshness-'));
    mkdirSync(path.join(root, 'infrastructure', 'build'), { recursive: true });
    copyFileSync(SCRIPT, path.join(root, 'infrastructure', 'build', 'freshness.cjs'));
    mkdirSync(path.join(root, 'domain'));
    writeFileSync(source(), 'export {};\n');
    writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
    touch(source(), -60);
    touch(path.join(root, 'tsconfig.json'), -60);
    touch(path.join(root, 'infrastructure', 'build', 'freshness.cjs'), -60);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('asks for a build when none is recorded, and says why on stderr', () => {
    const result = check();
    expect(result.status).to.equal(1);
    expect(result.stderr).to.match(/sources changed since the last build/);
  });

  it('is fresh after a finished build, until a source or a setting changes', () => {
    build();
    expect(check().status).to.equal(0);
    touch(source(), 1);
    expect(check().status).to.equal(1);
    build();
    touch(source(), -60);
    expect(check().status).to.equal(0);
    touch(path.join(root, 'tsconfig.json'), 1);
    expect(check().status).to.equal(1);
  });

  it('counts a file edited while the build ran as changed', () => {
    expect(check('--starting').status).to.equal(0);
    // Edited after the build began, before it ended: the record keeps the start.
    touch(source(), 0);
    expect(check('--built').status).to.equal(0);
    expect(check().status).to.equal(1);
  });

  it('records nothing for a build that did not finish, nor for one that did not start', () => {
    build();
    expect(check('--starting').status).to.equal(0);
    touch(source(), 1);
    // The compiler failed: no --built. The earlier record stands, older than the edit.
    expect(check().status).to.equal(1);
    rmSync(path.join(root, 'dist'), { recursive: true, force: true });
    const unstarted = check('--built');
    expect(unstarted.status).to.not.equal(0);
    expect(unstarted.stderr).to.match(/run the whole of npm run build/);
  });
});
