// Generating Ed25519 keys and exporting them as JWK (paseto's PASERK, the audit signer's key id)
// under garbage collection. Node 20's generateKeyPairSync hands back KeyObjects that share a lock
// with its job object; a collection that finalizes the job while a JWK export of one of them
// holds the lock hangs the thread for good (it hung a CI run). generateEd25519KeyPair reads the
// keys back from DER: a child process that generates and exports thousands of them with a
// collection every 50 allocations ends. With the keys straight from generateKeyPairSync the same
// loop hangs in most runs (the test then fails on its deadline).

import { expect } from 'chai';
import { execFile } from 'node:child_process';
import path from 'node:path';

const KEYS = path.join(__dirname, '../../infrastructure/crypto/keys.js');

describe('token key generation under garbage collection', function () {
  this.timeout(90_000);

  it('generates and exports keys without ever hanging the thread', async () => {
    const script = `
      const { generateEd25519KeyPair, generateTokenKey } = require(${JSON.stringify(KEYS)});
      for (let i = 0; i < 4000; i += 1) {
        const { privateKey, publicKey } = generateEd25519KeyPair();
        privateKey.export({ format: 'jwk' });
        publicKey.export({ format: 'jwk' });
        if (i % 10 === 0) generateTokenKey();
      }
      console.log('done');
    `;
    const outcome = await new Promise<{ code: number | null; stdout: string; hung: boolean }>((resolve) => {
      const child = execFile(process.execPath, ['--gc-interval=50', '-e', script], { timeout: 60_000, killSignal: 'SIGKILL' }, (error, stdout) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, hung: error !== null && (error as { killed?: boolean }).killed === true });
      });
      child.stdin?.end();
    });
    expect(outcome.hung, 'the key generation hung (a deadlock in a JWK export)').to.equal(false);
    expect([outcome.code, outcome.stdout.trim()]).to.deep.equal([0, 'done']);
  });
});
