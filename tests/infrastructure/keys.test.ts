import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadKeys } from '../../infrastructure/crypto/keys';
import { temporaryDirectory } from '../support/files';

const run = promisify(execFile);
const KEYS_MODULE = path.join(__dirname, '..', '..', 'infrastructure', 'crypto', 'keys.js');

describe('platform keys kept in DATA_DIR', function () {
  this.timeout(30_000);

  it('are generated once, kept with mode 0600, and read back the same', () => {
    const dir = temporaryDirectory();
    try {
      const first = loadKeys({ dataDir: dir.path, tokenSecretKey: null, dataEncryptionKey: null });
      const again = loadKeys({ dataDir: dir.path, tokenSecretKey: null, dataEncryptionKey: null });
      expect(again.dataKey.equals(first.dataKey)).to.equal(true);
      expect(fs.statSync(path.join(dir.path, 'keys.json')).mode & 0o777).to.equal(0o600);
      expect(fs.readdirSync(dir.path)).to.deep.equal(['keys.json']);
    } finally {
      dir.remove();
    }
  });

  it('are the same keys for processes that start at the same moment on a new folder, none reading a half-written file', async () => {
    const dir = temporaryDirectory();
    try {
      const script = `const { loadKeys } = require(${JSON.stringify(KEYS_MODULE)});
        const keys = loadKeys({ dataDir: ${JSON.stringify(dir.path)}, tokenSecretKey: null, dataEncryptionKey: null });
        process.stdout.write(require('node:crypto').createHash('sha256').update(keys.dataKey).digest('hex'));`;
      const digests = await Promise.all(Array.from({ length: 8 }, () => run(process.execPath, ['-e', script]).then(({ stdout }) => stdout)));
      const kept = loadKeys({ dataDir: dir.path, tokenSecretKey: null, dataEncryptionKey: null });
      expect(new Set(digests)).to.deep.equal(new Set([createHash('sha256').update(kept.dataKey).digest('hex')]));
      expect(fs.readdirSync(dir.path)).to.deep.equal(['keys.json']);
    } finally {
      dir.remove();
    }
  });
});
