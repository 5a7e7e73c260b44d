// The OutboundHttp adapter: POSTs a body signed as spec 5.2 signs connector requests, through
// the address guard (address-guard.ts), with a time limit. Signature: `x-svc-timestamp` (Unix
// seconds) and `x-svc-signature` = `v1=` + lowercase hex HMAC-SHA256 of
// `v1:<timestamp>:<raw body>` under the secret; the connector SDK's verifier
// (adapters/connector-sdk/signing.ts) accepts it, which tests/infrastructure checks.
// Redirects are not followed: a redirect could lead where the guard would refuse, and the
// answer counts as it came. The answer's body is read (to free the connection) and dropped.

import { createHmac } from 'node:crypto';
import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { OutboundCallError, type OutboundAnswer, type OutboundHttp, type OutboundRefusal, type SignedPost } from '../../application/ports/outbound-http';
import { AddressGuard, type OutboundPolicy, REFUSED_ADDRESS_CODE, type Resolve } from './address-guard';

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

  postSigned(post: SignedPost): Promise<OutboundAnswer> {
    const form = this.guard.refusalOfForm(post.url);
    if ('refusal' in form) return Promise.reject(new OutboundCallError(form.refusal.reason, form.refusal.message));
    const body = Buffer.from(post.body, 'utf8');
    const headers = {
      ...post.headers,
      'content-type': 'application/json',
      'content-length': String(body.length),
      [TIMESTAMP_HEADER]: String(post.timestampSeconds),
      [SIGNATURE_HEADER]: signBody(post.secret, post.timestampSeconds, body),
    };
    const send = form.url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<OutboundAnswer>((resolve, reject) => {
      let settled = false;
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        outcome();
      };
      const request: ClientRequest = send(form.url, { method: 'POST', headers, lookup: this.guard.lookup }, (answer: IncomingMessage) => {
        let read = 0;
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) answer.destroy();
        });
        answer.on('close', () => finish(() => resolve({ status: answer.statusCode ?? 0 })));
        answer.on('error', () => finish(() => resolve({ status: answer.statusCode ?? 0 })));
      });
      const timer = setTimeout(() => {
        finish(() => reject(new OutboundCallError('timeout', `no answer within ${post.timeoutMs} ms`)));
        request.destroy();
      }, post.timeoutMs);
      request.on('error', (error: NodeJS.ErrnoException) =>
        finish(() =>
          reject(
            error.code === REFUSED_ADDRESS_CODE
              ? new OutboundCallError('private_address', error.message)
              : error.code === 'ENOTFOUND'
                ? new OutboundCallError('unresolvable_host', error.message)
                : new OutboundCallError('network', error.message || error.code || 'the connection failed'),
          ),
        ),
      );
      request.end(body);
    });
  }
}
