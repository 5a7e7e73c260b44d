// A local HTTP server that speaks the small part of Stripe's wire format the Stripe adapter
// uses: `POST /v1/checkout/sessions` (a form-encoded body with bracketed keys, honouring
// `Idempotency-Key`) and `GET /v1/checkout/sessions/{id}` (with `expand[]`), answering JSON
// session objects and Stripe's `{error: {type, code, message}}` shape. Stripe's API cannot be
// reached from here, so the official client is pointed at this instead (its host, port and
// protocol options); every request is recorded as it arrived, for the tests to assert the
// fields the adapter sends.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedStripeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  form: URLSearchParams;
}

export type StripeSession = Record<string, unknown> & { id: string };

export class LocalStripeApi {
  readonly requests: RecordedStripeRequest[] = [];
  readonly sessions = new Map<string, StripeSession>();
  /** The next answers to give instead of the normal one: `[status, error body]`. */
  readonly failures: Array<[number, { type: string; code?: string; message: string }]> = [];
  private readonly byIdempotencyKey = new Map<string, string>();
  private counter = 0;

  private constructor(
    private readonly server: http.Server,
    readonly now: () => number,
  ) {}

  /** `now` gives unix seconds, for `created` and `expires_at`. */
  static async start(now: () => number): Promise<LocalStripeApi> {
    const server = http.createServer();
    const api = new LocalStripeApi(server, now);
    server.on('request', (request, response) => api.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private nextId(prefix: string): string {
    this.counter += 1;
    return `${prefix}${String(this.counter).padStart(8, '0')}`;
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://stripe.local');
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      this.requests.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams, headers: request.headers, form });
      const send = (status: number, body: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': this.nextId('req_') });
        response.end(JSON.stringify(body));
      };
      const failure = this.failures.shift();
      if (failure) return send(failure[0], { error: failure[1] });
      if (request.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
        const key = request.headers['idempotency-key'];
        const known = typeof key === 'string' ? this.byIdempotencyKey.get(key) : undefined;
        if (known) return send(200, this.sessions.get(known));
        const session = this.createSession(form);
        if (typeof key === 'string') this.byIdempotencyKey.set(key, session.id);
        return send(200, session);
      }
      const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
      if (request.method === 'GET' && retrieve) {
        const session = this.sessions.get(decodeURIComponent(retrieve[1]));
        if (!session) return send(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such checkout.session: '${retrieve[1]}'` } });
        const expand = [...url.searchParams.entries()].filter(([name]) => /^expand\[\d*\]$/.test(name)).map(([, value]) => value);
        return send(200, this.expanded(session, expand));
      }
      send(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${url.pathname})` } });
    });
  }

  private createSession(form: URLSearchParams): StripeSession {
    const id = this.nextId('cs_test_');
    const metadata: Record<string, string> = {};
    for (const [name, value] of form) {
      const key = /^metadata\[(.+)\]$/.exec(name);
      if (key) metadata[key[1]] = value;
    }
    const session: StripeSession = {
      id,
      object: 'checkout.session',
      mode: form.get('mode'),
      status: 'open',
      payment_status: 'unpaid',
      url: `https://checkout.stripe.com/c/pay/${id}`,
      created: this.now(),
      expires_at: this.now() + 24 * 3600,
      amount_total: Number(form.get('line_items[0][price_data][unit_amount]')) * Number(form.get('line_items[0][quantity]') ?? 1),
      currency: form.get('line_items[0][price_data][currency]'),
      client_reference_id: form.get('client_reference_id'),
      customer_email: form.get('customer_email'),
      metadata,
      success_url: form.get('success_url'),
      cancel_url: form.get('cancel_url'),
      payment_intent: null,
      livemode: false,
    };
    this.sessions.set(id, session);
    return session;
  }

  /** A PaymentIntent (and its latest charge) kept beside a session, returned when expanded. */
  private readonly intents = new Map<string, Record<string, unknown>>();

  private expanded(session: StripeSession, expand: string[]): StripeSession {
    const intentId = session.payment_intent as string | null;
    if (!intentId || !expand.some((path) => path === 'payment_intent' || path.startsWith('payment_intent.'))) return session;
    const intent = { ...this.intents.get(intentId)! };
    if (!expand.includes('payment_intent.latest_charge')) intent.latest_charge = (intent.latest_charge as { id: string } | null)?.id ?? null;
    return { ...session, payment_intent: intent };
  }

  /** The person paid on Stripe's page: the session completes, paid, with a PaymentIntent and its charge. */
  markPaid(id: string): StripeSession {
    const session = this.sessions.get(id)!;
    const intent = this.nextId('pi_test_');
    this.intents.set(intent, { id: intent, object: 'payment_intent', status: 'succeeded', last_payment_error: null, latest_charge: { id: this.nextId('ch_test_'), object: 'charge', created: this.now() } });
    Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: intent });
    return session;
  }

  /** A delayed payment method was refused after the session completed. */
  markAsyncFailed(id: string): StripeSession {
    const session = this.sessions.get(id)!;
    const intent = this.nextId('pi_test_');
    this.intents.set(intent, {
      id: intent,
      object: 'payment_intent',
      status: 'requires_payment_method',
      last_payment_error: { type: 'card_error', code: 'payment_intent_payment_attempt_failed', decline_code: 'insufficient_funds', message: 'The bank refused the debit.' },
      latest_charge: null,
    });
    Object.assign(session, { status: 'complete', payment_status: 'unpaid', payment_intent: intent });
    return session;
  }

  expire(id: string): StripeSession {
    return Object.assign(this.sessions.get(id)!, { status: 'expired' });
  }

  /** A webhook event as Stripe sends it, about `object`. */
  event(type: string, object: unknown): Record<string, unknown> {
    return { id: this.nextId('evt_test_'), object: 'event', api_version: '2026-10-28.endive', created: this.now(), type, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null }, data: { object } };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
