// OAuth2 client credentials for integrations (RFC 6749 section 4.4): the platform asks the
// integration's token URL for an access token and keeps it, in this process, until shortly
// before it expires.
//
// - The request: POST `grant_type=client_credentials` (and `scope`, the scopes space-separated,
//   when there are some), the client authenticated with HTTP Basic (client id and secret, each
//   form-encoded: RFC 6749 section 2.3.1, which every server must support). Through the outbound
//   guard, with the tool timeout and a 64 KiB answer limit.
// - A token is kept per integration and its revision: any change of the integration (a new
//   secret, client id, scopes or token URL) starts afresh. It is used until EXPIRY_MARGIN
//   (at most a tenth of its life) before `expires_in`; without `expires_in`, for
//   DEFAULT_LIFETIME_SECONDS. A kept token the API answers 401 is dropped and fetched anew once
//   (the tool call does that).
// - Calls waiting for the same token share one request.
// - What the token endpoint answered is never recorded or logged (it holds the token); a
//   refusal says its status and, when the answer is a standard OAuth2 error, its code.

import { LRUCache } from 'lru-cache';
import type { Clock } from '../ports/clock';
import { OutboundCallError, type OutboundHttp } from '../ports/outbound-http';

/** Tokens kept per process, at most. */
const KEPT_TOKENS = 1000;
const EXPIRY_MARGIN_SECONDS = 60;
const DEFAULT_LIFETIME_SECONDS = 300;
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;
const TOKEN = /^[\x21-\x7e]{1,8192}$/;

/** No token could be had: the tool call fails with `auth_failed` (or the outbound reason). */
export class AccessTokenError extends Error {
  constructor(
    readonly code: 'auth_failed' | OutboundCallError['reason'],
    message: string,
  ) {
    super(message);
    this.name = 'AccessTokenError';
  }
}

export interface ClientCredentials {
  token_url: string;
  client_id: string;
  client_secret: string;
  scopes: readonly string[];
}

interface KeptToken {
  value: string;
  /** Epoch ms after which it is not used. */
  usableUntil: number;
}

/** The tokens of integrations, kept in this process (each process asks for its own). */
export class AccessTokenCache {
  private readonly tokens = new LRUCache<string, KeptToken>({ max: KEPT_TOKENS });
  private readonly pending = new Map<string, Promise<KeptToken>>();

  /** A usable token under `key`, fetched when none is kept; `kept` says whether it came from the cache. */
  async token(key: string, clock: Clock, fetch: () => Promise<{ value: string; expiresInSeconds: number | null }>): Promise<{ value: string; kept: boolean }> {
    const kept = this.tokens.get(key);
    if (kept && kept.usableUntil > clock.now().getTime()) return { value: kept.value, kept: true };
    let pending = this.pending.get(key);
    if (!pending) {
      pending = (async () => {
        const fetched = await fetch();
        const lifetime = fetched.expiresInSeconds ?? DEFAULT_LIFETIME_SECONDS;
        const margin = Math.min(EXPIRY_MARGIN_SECONDS, lifetime / 10);
        const token = { value: fetched.value, usableUntil: clock.now().getTime() + (lifetime - margin) * 1000 };
        this.tokens.set(key, token);
        return token;
      })().finally(() => this.pending.delete(key));
      this.pending.set(key, pending);
    }
    return { value: (await pending).value, kept: false };
  }

  /** Drops the token under `key` if it is still `value` (the API refused it). */
  forget(key: string, value: string): void {
    if (this.tokens.get(key)?.value === value) this.tokens.delete(key);
  }
}

const formEncoded = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);

/** Asks the token URL for an access token with the client's credentials. */
export async function fetchAccessToken(outbound: OutboundHttp, client: ClientCredentials, timeoutMs: number): Promise<{ value: string; expiresInSeconds: number | null }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (client.scopes.length > 0) form.set('scope', client.scopes.join(' '));
  let answer;
  try {
    answer = await outbound.request({
      method: 'POST',
      url: client.token_url,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${formEncoded(client.client_id)}:${formEncoded(client.client_secret)}`).toString('base64')}`,
      },
      body: form.toString(),
      timeoutMs,
      maxResponseBytes: MAX_TOKEN_ANSWER_BYTES,
    });
  } catch (error) {
    if (error instanceof OutboundCallError) throw new AccessTokenError(error.reason, `the token URL: ${error.message}`);
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    parsed = null;
  }
  const fields = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  if (answer.status < 200 || answer.status >= 300) {
    const code = typeof fields.error === 'string' && /^[a-z_]{1,64}$/.test(fields.error) ? ` (${fields.error})` : '';
    throw new AccessTokenError('auth_failed', `the token URL refused the client credentials: HTTP ${answer.status}${code}`);
  }
  if (typeof fields.access_token !== 'string' || !TOKEN.test(fields.access_token)) throw new AccessTokenError('auth_failed', 'the token URL answered without a usable access_token');
  if (typeof fields.token_type === 'string' && fields.token_type.toLowerCase() !== 'bearer') throw new AccessTokenError('auth_failed', 'the token URL answered a token of another type than bearer, the only one used');
  const expiresIn = typeof fields.expires_in === 'number' ? fields.expires_in : typeof fields.expires_in === 'string' ? Number(fields.expires_in) : Number.NaN;
  return { value: fields.access_token, expiresInSeconds: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : null };
}
