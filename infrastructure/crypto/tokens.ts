// PASETO v4.public tokens. The audience separates tenant tokens from super-admin tokens, so
// neither is accepted where the other is expected.
//
// An Ed25519 verification costs more than the rest of a typical request, so verified tokens
// are remembered (bounded, least recently used first out). That is safe: a token's signature
// does not change, its expiry is checked on every use, and revocation is the session check
// that runs on every request anyway.

import type { KeyObject } from 'node:crypto';
import { V4 } from 'paseto';
import type { TokenAudience, TokenClaims, TokenService } from '../../application/ports/identity';
import type { Clock } from '../../application/ports/clock';

const ISSUER = 'svc-platform';
const VERIFIED_CACHE_SIZE = 10_000;
const audienceOf = (audience: TokenAudience): string => `svc:${audience}`;

interface Payload {
  sub: string;
  tid: string | null;
  role: string | null;
  jti: string;
  aud: string;
  iat: string;
  exp: string;
}

export class PasetoTokenService implements TokenService {
  private readonly verified = new Map<string, TokenClaims>();

  constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    private readonly clock: Clock,
  ) {}

  async sign(claims: TokenClaims): Promise<string> {
    const payload: Payload = {
      sub: claims.user_id,
      tid: claims.tenant_id,
      role: claims.role,
      jti: claims.jti,
      aud: audienceOf(claims.audience),
      iat: claims.issued_at,
      exp: claims.expires_at,
    };
    return V4.sign({ ...payload, iss: ISSUER }, this.privateKey, { iat: false });
  }

  async verify(token: string, audience: TokenAudience): Promise<TokenClaims | null> {
    if (!token.startsWith('v4.public.')) return null;
    const key = `${audience} ${token}`;
    const known = this.verified.get(key);
    if (known) {
      if (Date.parse(known.expires_at) > this.clock.now().getTime()) return known;
      this.verified.delete(key);
      return null;
    }
    const claims = await this.verifySignature(token, audience);
    if (claims) {
      this.verified.set(key, claims);
      if (this.verified.size > VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    }
    return claims;
  }

  private async verifySignature(token: string, audience: TokenAudience): Promise<TokenClaims | null> {
    try {
      const payload = await V4.verify<Payload>(token, this.publicKey, { audience: audienceOf(audience), issuer: ISSUER, now: this.clock.now() });
      return {
        user_id: payload.sub,
        tenant_id: payload.tid,
        role: payload.role,
        jti: payload.jti,
        audience,
        issued_at: payload.iat,
        expires_at: payload.exp,
      };
    } catch {
      return null;
    }
  }
}
