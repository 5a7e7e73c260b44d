// The OutboundHttp adapter: guarded requests (address-guard.ts) with a time and size limit, and
// POSTs of a body signed as spec 5.2 signs connector requests. Signature: `x-svc-timestamp` (Unix
// seconds) and `x-svc-signature` = `v1=` + lowercase hex HMAC-SHA256 of
// `v1:<timestamp>:<raw body>` under the secret; the connector SDK's verifier
// (adapters/connector-sdk/signing.ts) accepts it, which tests/infrastructure checks.
// Redirects are not followed: a redirect could lead where the guard would refuse, and the
// answer counts as it came. A signed POST's answer body is read (to free the connection) and dropped.

import { createHmac } from 'node:crypto';
import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { OutboundCallError, type OutboundAnswer, type OutboundHttp, type OutboundRefusal, type OutboundRequest, type OutboundResponse, type SignedPost } from '../../application/ports/outbound-http';
import { AddressGuard, type OutboundPolicy, REFUSED_ADDRESS_CODE, type Resolve } from './address-guard';
import { messageOf } from '../../domain/shared/errors';

export const SIGNATURE_HEADER = 'x-svc-signature';
export const TIMESTAMP_HEADER = 'x-svc-timestamp';

/** `v1=` + lowercase hex HMAC-SHA256 of `v1:<timestamp>:<raw body>` (spec 5.2). */
export function signBody(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  return `v1=${createHmac('sha256', secret).update(`v1:${timestampSeconds}:`).update(rawBody).digest('hex')}`;
}

/** An answer's body beyond this is not read: only the status counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

export class GuardedOutboundHttp implements OutboundHttp {
  private readonly guard: AddressGuard;

  constructor(policy: OutboundPolicy, resolve?: Resolve) {
    this.guard = new AddressGuard(policy, resolve);
  }

  refusalOf(url: string): Promise<OutboundRefusal | null> {
    return this.guard.refusalOf(url);
  }

  async postSigned(post: SignedPost): Promise<OutboundAnswer> {
    const body = Buffer.from(post.body, 'utf8');
    const headers = {
      ...post.headers,
      'content-type': 'application/json',
      [TIMESTAMP_HEADER]: String(post.timestampSeconds),
      [SIGNATURE_HEADER]: signBody(post.secret, post.timestampSeconds, body),
    };
    // Only the status counts: a longer answer is cut, not refused.
    const answer = await this.send({ method: 'POST', url: post.url, headers, body, timeoutMs: post.timeoutMs, maxResponseBytes: MAX_ANSWER_BYTES }, 'cut');
    return { status: answer.status };
  }

  request(request: OutboundRequest): Promise<OutboundResponse> {
    return this.send(request, 'refuse');
  }

  /** One guarded exchange; an answer longer than the limit is cut short (`cut`) or refused (`refuse`). */
  private send(outbound: OutboundRequest, overLimit: 'cut' | 'refuse'): Promise<OutboundResponse> {
    const form = this.guard.refusalOfForm(outbound.url);
    if ('refusal' in form) return Promise.reject(new OutboundCallError(form.refusal.reason, form.refusal.message));
    const body = outbound.body === null ? null : typeof outbound.body === 'string' ? Buffer.from(outbound.body, 'utf8') : outbound.body;
    const headers: Record<string, string> = {};
    // node:http writes header values as Latin-1: a value beyond it goes as its UTF-8 bytes, as
    // other clients send it, rather than failing the call.
    for (const [name, value] of Object.entries(outbound.headers)) headers[name] = /[^\x00-\xff]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value;
    if (body !== null) headers['content-length'] = String(body.length);
    const send = form.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<OutboundResponse>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      let request: ClientRequest | undefined;
      // A kept-alive connection the server closed meanwhile fails the request before any answer
      // (ECONNRESET, EPIPE on a reused socket). Whether the server read the request first cannot
      // be told, so only a request of an idempotent method (RFC 9110 9.2.2) is sent once more, on
      // a fresh connection; a POST fails as `network`, and its caller decides (a connector call
      // is repeated only with its request_id).
      const resendable = IDEMPOTENT_METHODS.has(outbound.method.toUpperCase());
      const start = (fresh: boolean): void => {
        let answered = false;
        try {
          request = send(form.url, { method: outbound.method, headers, lookup: this.guard.lookup, ...(fresh ? { agent: false } : {}) }, (answer: IncomingMessage) => {
            answered = true;
            const chunks: Buffer[] = [];
            let read = 0;
            let cut = false;
            const whole = (): OutboundResponse => ({ status: answer.statusCode ?? 0, headers: headersOf(answer), body: Buffer.concat(chunks) });
            answer.on('data', (chunk: Buffer) => {
              if (cut) return;
              read += chunk.length;
              if (read <= outbound.maxResponseBytes) {
                chunks.push(chunk);
                return;
              }
              cut = true;
              answer.destroy();
              if (overLimit === 'refuse') finish(() => reject(new OutboundCallError('response_too_large', `the answer is larger than ${outbound.maxResponseBytes} bytes`)));
            });
            // An answer the server broke off is no answer where its body counts (`refuse`); where only the status does, it stands.
            const ended = (): void =>
              finish(() => (overLimit === 'refuse' && !answer.complete ? reject(new OutboundCallError('network', 'the answer was cut off before its end')) : resolve(whole())));
            answer.on('close', ended);
            answer.on('error', ended);
          });
        } catch (error) {
          // A request node:http will not even start (a header it cannot write): no answer, said as such.
          finish(() => reject(new OutboundCallError('network', messageOf(error))));
          return;
        }
        const current = request;
        current.on('error', (error: NodeJS.ErrnoException) => {
          if (resendable && !fresh && !answered && !settled && current.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
            start(true);
            return;
          }
          finish(() =>
            reject(
              error.code === REFUSED_ADDRESS_CODE
                ? new OutboundCallError('private_address', error.message)
                : error.code === 'ENOTFOUND'
                  ? new OutboundCallError('unresolvable_host', error.message)
                  : new OutboundCallError('network', error.message || error.code || 'the connection failed'),
            ),
          );
        });
        current.end(body ?? undefined);
      };
      const timer = setTimeout(() => {
        finish(() => reject(new OutboundCallError('timeout', `no answer within ${outbound.timeoutMs} ms`)));
        request?.destroy();
      }, outbound.timeoutMs);
      start(false);
    });
  }
}

/** Methods a client may send again after a connection failed under them (RFC 9110 9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** An answer's headers, names lowercased, repeated ones joined. */
function headersOf(answer: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}
