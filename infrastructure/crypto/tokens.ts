// PASETO v4.public tokens. The audience separates tenant tokens from super-admin tokens, so
// neither is accepted where the other is expected.
//
// An Ed25519 verification costs more than the rest of a typical request, so verified tokens
// are remembered (bounded, oldest first out). That is safe: a token's signature
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

interface Verified {
  claims: TokenClaims;
  expiresAtMs: number;
}

export class PasetoTokenService implements TokenService {
  /** Per audience, keyed by the token itself. */
  private readonly verified: Record<TokenAudience, Map<string, Verified>> = { tenant: new Map(), admin: new Map() };

  constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKey: KeyObject,
    private readonly clock: Clock,
    private readonly cacheSize = VERIFIED_CACHE_SIZE,
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
    const cache = this.verified[audience];
    const known = cache.get(token);
    if (known) {
      if (known.expiresAtMs > this.clock.now().getTime()) return known.claims;
      cache.delete(token);
      return null;
    }
    const claims = await this.verifySignature(token, audience);
    if (claims) {
      cache.set(token, { claims, expiresAtMs: Date.parse(claims.expires_at) });
      const { tenant, admin } = this.verified;
      if (tenant.size + admin.size > this.cacheSize) {
        // Out goes the oldest entry of the larger map.
        const fuller = tenant.size >= admin.size ? tenant : admin;
        fuller.delete(fuller.keys().next().value as string);
      }
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
