// The events bench's fair reference (bench/events.ts): a bare durable queue doing the work each
// event of the bench requires, and nothing else. One SQLite table (WAL, synchronous=full, as
// the platform's store) is both the queue and what a reader would query; writes are group
// committed once per turn of the event loop, as the platform's are.
//
// Per `shop.order.created` it does what the platform must: store the event before answering
// its producer (over HTTP: a bearer token checked, the JSON body read and checked, 201 with
// the stored event); claim it durably before calling the connector (so a crash cannot lose
// the claim); call `notify_warehouse` through the SDK's signed callConnector with a request id
// derived from the event; store the outcome, the follow-on `shop.order.prepared` (causation,
// depth + 1) and the processed status in one commit; and end the follow-on processed (no flow
// matches it). What it leaves out is what the platform adds beyond this workload: events as
// the record of every change (six per order) and the read models built from them, the
// audit log's hash chain, idempotency keys, sequences, expiry, retries, tenants, roles.

import Database from 'better-sqlite3';
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { callConnector, PROTOCOL_VERSION } from '../adapters/connector-sdk';
import { timeOrderedIdGenerator } from '../infrastructure/system';
import { Arrivals } from './_events-clock';

export interface BareQueue {
  baseUrl: string;
  token: string;
  emit(orderId: string): Promise<string>;
  /** Resolves when the event is processed; the time it was (wallClockMs). */
  processed(eventId: string): Promise<number>;
  close(): Promise<void>;
}

interface Row {
  position: number;
  id: string;
  name: string;
  payload: string;
  depth: number;
}

const SCHEMA = `
CREATE TABLE queue (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  payload TEXT NOT NULL,
  causation_id TEXT,
  depth INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  received_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX queue_status ON queue (status, position);
`;

export async function startBareQueue(options: { file: string; connectorUrl: string; secret: string; concurrency: number }): Promise<BareQueue> {
  const db = new Database(options.file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(SCHEMA);
  const newId = timeOrderedIdGenerator();
  const statements = {
    insert: db.prepare('INSERT INTO queue (id, name, payload, causation_id, depth, status, received_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    claim: db.prepare("UPDATE queue SET status = 'dispatched', attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'queued'"),
    finish: db.prepare("UPDATE queue SET status = 'processed', result = ?, updated_at = ? WHERE id = ?"),
    due: db.prepare<[number], Row>("SELECT position, id, name, payload, depth FROM queue WHERE status = 'queued' ORDER BY position LIMIT ?"),
  };

  // Group commit: the writes of one turn in one transaction, each caller answered once it is on disk.
  let pending: Array<{ write: () => void; done: (error?: unknown) => void }> = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const group = pending;
    pending = [];
    try {
      db.transaction(() => group.forEach(({ write }) => write())).immediate();
    } catch (error) {
      for (const { done } of group) done(error);
      return;
    }
    for (const { done } of group) done();
  };
  const commit = (write: () => void): Promise<void> =>
    new Promise((resolve, reject) => {
      pending.push({ write, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  const processed = new Arrivals();
  const markProcessed = (id: string): void => processed.arrived(id);

  // The dispatcher: up to `concurrency` events at once, oldest first.
  const claimed = new Set<string>();
  let pumping = false;
  let closing = false;
  const pump = (): void => {
    if (pumping || closing) return;
    pumping = true;
    try {
      const free = options.concurrency - claimed.size;
      if (free <= 0) return;
      for (const row of statements.due.all(free + claimed.size)) {
        if (claimed.size >= options.concurrency) break;
        if (claimed.has(row.id)) continue;
        claimed.add(row.id);
        void dispatch(row).finally(() => {
          claimed.delete(row.id);
          pump();
        });
      }
    } finally {
      pumping = false;
    }
  };

  const dispatch = async (row: Row): Promise<void> => {
    const now = new Date().toISOString();
    if (row.name !== 'shop.order.created') {
      // No flow: claimed and processed in one write.
      await commit(() => {
        statements.claim.run(now, row.id);
        statements.finish.run(null, now, row.id);
      });
      markProcessed(row.id);
      return;
    }
    await commit(() => statements.claim.run(now, row.id));
    const payload = JSON.parse(row.payload) as { order_id: string };
    const answer = await callConnector({
      url: options.connectorUrl,
      secret: options.secret,
      body: { protocol_version: PROTOCOL_VERSION, request_id: `${row.id}:1:prepare_order:0`, type: 'tool.invoke', tool: 'notify_warehouse', parameters: { order_id: payload.order_id } },
    });
    const output = (answer.json as { output?: unknown } | undefined)?.output ?? null;
    if (answer.status !== 200) throw new Error(`the connector answered ${answer.status}`);
    const followOn = newId();
    const done = new Date().toISOString();
    await commit(() => {
      statements.insert.run(followOn, 'shop.order.prepared', JSON.stringify({ order_id: payload.order_id, ticket: (output as { ticket?: string } | null)?.ticket ?? null }), row.id, row.depth + 1, 'queued', done, done);
      statements.finish.run(JSON.stringify(output), done, row.id);
    });
    markProcessed(row.id);
  };

  const emit = async (name: string, payload: Record<string, unknown>): Promise<{ id: string; received_at: string }> => {
    const id = newId();
    const receivedAt = new Date().toISOString();
    await commit(() => statements.insert.run(id, name, JSON.stringify(payload), null, 0, 'queued', receivedAt, receivedAt));
    pump();
    return { id, received_at: receivedAt };
  };

  const token = 'bare-reference-token';
  const expected = Buffer.from(`Bearer ${token}`);
  const server = http.createServer((request, response) => {
    const answer = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const authorization = Buffer.from(request.headers.authorization ?? '');
    if (request.method !== 'POST' || request.url !== '/api/v1/org/events') return answer(404, { code: 'not_found', message: 'no such route' });
    if (authorization.length !== expected.length || !timingSafeEqual(authorization, expected)) return answer(401, { code: 'unauthorized', message: 'a bearer token is required' });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: { name?: unknown; payload?: unknown; source?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return answer(400, { code: 'invalid_json', message: 'the body is not JSON' });
      }
      if (typeof body.name !== 'string' || !/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){2,}$/.test(body.name)) return answer(400, { code: 'invalid_event_name', message: 'name', field: 'name' });
      const payload = body.payload === undefined || body.payload === null ? {} : body.payload;
      if (typeof payload !== 'object' || Array.isArray(payload)) return answer(400, { code: 'invalid_request', message: 'payload', field: 'payload' });
      emit(body.name, payload as Record<string, unknown>).then(
        ({ id, received_at }) => answer(201, { id, name: body.name, source: body.source ?? null, payload, status: 'queued', received_at }),
        () => answer(500, { code: 'internal_error', message: 'not stored' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    emit: async (orderId) => (await emit('shop.order.created', { order_id: orderId })).id,
    processed: (eventId) => processed.when(eventId),
    async close() {
      // What runs ends (its commits too) before the file closes; nothing new starts.
      closing = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      while (claimed.size > 0 || pending.length > 0 || scheduled) await new Promise((resolve) => setTimeout(resolve, 5));
      db.close();
    },
  };
}
