import { expect } from 'chai';
import type { PasswordHasher } from '../../application/ports/identity';
import { LOGIN, PASSWORD, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

/** The scrypt parameters a verification ran with, read from the encoded hash it was given. */
function costOf(encoded: string): string {
  const [scheme, logN, r, p, salt, hash] = encoded.split('$');
  return salt && hash ? [scheme, logN, r, p].join('$') : `malformed: ${encoded.split('$').length} parts`;
}

describe('login does not tell which emails exist (#9.5)', () => {
  let server: TestServer;
  const verifications: string[] = [];

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    const real = server.platform.identity.passwords;
    const recording: PasswordHasher = {
      hash: (password) => real.hash(password),
      verify: (password, encoded) => {
        verifications.push(costOf(encoded));
        return real.verify(password, encoded);
      },
    };
    server.platform.identity.passwords = recording;
    await registerOwner(server, 'enumeration', 'known@example.com');
  });
  after(() => server.close());

  it('runs the same password work for an unknown email as for a wrong password', async () => {
    verifications.length = 0;
    const wrong = await gql(server, LOGIN, { email: 'known@example.com', password: 'not the password' });
    const unknown = await gql(server, LOGIN, { email: 'nobody@example.com', password: PASSWORD });
    expect(wrong.json.errors[0].extensions.code).to.equal('invalid_credentials');
    expect(unknown.json.errors[0].extensions.code).to.equal('invalid_credentials');
    expect(unknown.json.errors[0].message).to.equal(wrong.json.errors[0].message);
    expect(verifications).to.have.length(2);
    expect(verifications[1], 'the unknown email’s check').to.equal(verifications[0]);
    expect(verifications[0]).to.equal('scrypt$12$8$1');
  });
});
