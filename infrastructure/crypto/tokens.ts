// PASETO v4.public tokens. The audience separates tenant tokens from super-admin tokens, so
// neither is accepted where the other is expected.
//
// An Ed25519 verification costs more than the rest of a typical request, so verified tokens
// are remembered (an LRU cache, bounded, each entry dropped when its token expires). That is
// safe: a token's signature does not change, its expiry is checked on every use, and
// revocation is the session check that runs on every request anyway.

import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
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

interface Verified {
  claims: TokenClaims;
  expiresAtMs: number;
}

export class PasetoTokenService implements TokenService {
  /** Keyed by the token itself; the claims say which audience it was verified for. */
  private readonly verified: LRUCache<string, Verified>;

  constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    private readonly clock: Clock,
    cacheSize = VERIFIED_CACHE_SIZE,
  ) {
    // The platform's clock, read on every check, so an entry ends exactly with its token.
    this.verified = new LRUCache({ max: cacheSize, perf: { now: () => clock.now().getTime() }, ttlResolution: 0 });
  }

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
    const known = this.verified.get(token);
    if (known) {
      // A token carries one audience: verified for the other, it would be refused.
      if (known.claims.audience !== audience) return null;
      // The cache's TTL keeps an entry up to and including its last millisecond; the
      // token is valid only before its expiry.
      return known.expiresAtMs > this.clock.now().getTime() ? known.claims : null;
    }
    const claims = await this.verifySignature(token, audience);
    if (claims) {
      const expiresAtMs = Date.parse(claims.expires_at);
      const ttl = expiresAtMs - this.clock.now().getTime();
      if (ttl > 0) this.verified.set(token, { claims, expiresAtMs }, { ttl });
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
