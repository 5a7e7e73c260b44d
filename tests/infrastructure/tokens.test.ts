// The token service remembers verified tokens; what it remembers must never widen what it accepts.

import { expect } from 'chai';
import type { TokenClaims } from '../../application/ports/identity';
import { PasetoTokenService } from '../../infrastructure/crypto/tokens';
import { ManualClock } from '../support/stores';
import { generateEd25519KeyPair } from '../../infrastructure/crypto/keys';

describe('PASETO token service', () => {
  const { privateKey, publicKey } = generateEd25519KeyPair();
  let clock: ManualClock;
  let tokens: PasetoTokenService;

  const claims = (overrides: Partial<TokenClaims> = {}): TokenClaims => ({
    user_id: 'u1',
    tenant_id: 't1',
    role: 'owner',
    jti: 'j1',
    audience: 'tenant',
    issued_at: clock.now().toISOString(),
    expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    ...overrides,
  });

  beforeEach(() => {
    clock = new ManualClock();
    tokens = new PasetoTokenService(privateKey, publicKey, clock, 2);
  });

  it('answers a remembered token until it expires, then never again', async () => {
    const token = await tokens.sign(claims());
    expect(await tokens.verify(token, 'tenant')).to.deep.include({ user_id: 'u1', jti: 'j1' });
    clock.advance(59_999);
    expect(await tokens.verify(token, 'tenant')).to.deep.include({ user_id: 'u1' });
    clock.advance(1);
    expect(await tokens.verify(token, 'tenant')).to.equal(null);
    expect(await tokens.verify(token, 'tenant')).to.equal(null);
  });

  it('keeps audiences apart after a token was remembered for one of them', async () => {
    const tenantToken = await tokens.sign(claims());
    const adminToken = await tokens.sign(claims({ audience: 'admin', tenant_id: null, role: null }));
    expect(await tokens.verify(tenantToken, 'tenant')).to.not.equal(null);
    expect(await tokens.verify(adminToken, 'admin')).to.not.equal(null);
    expect(await tokens.verify(tenantToken, 'admin')).to.equal(null);
    expect(await tokens.verify(adminToken, 'tenant')).to.equal(null);
  });

  it('refuses a tampered token and stays within its size, still verifying what it let go', async () => {
    const first = await tokens.sign(claims({ jti: 'a' }));
    // One character of the signature changed for another, away from the end (whose last may carry unused bits).
    const at = first.length - 10;
    const tampered = `${first.slice(0, at)}${first[at] === 'A' ? 'B' : 'A'}${first.slice(at + 1)}`;
    expect(await tokens.verify(tampered, 'tenant')).to.equal(null);
    for (const jti of ['a', 'b', 'c']) expect(await tokens.verify(await tokens.sign(claims({ jti })), 'tenant')).to.deep.include({ jti });
    expect(await tokens.verify(first, 'tenant')).to.deep.include({ jti: 'a' });
  });
});
