// The ws bench's bare reference (bench/ws.ts says what it does and leaves out). It imports
// nothing of the platform but the stores, the index, the chunking and the engine it uses, so
// its RSS is its own.

import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer } from 'ws';
import { chunkText } from '../application/knowledge/chunking';
import type { Passage } from '../application/ports/assistant-engine';
import type { EventMetadata, NewEvent } from '../application/ports/event-store';
import { ExtractiveAssistantEngine } from '../infrastructure/assistant/extractive';
import { SqliteEventStore } from '../infrastructure/event-store/sqlite';
import { SqliteSearchIndex } from '../infrastructure/search-index/sqlite';
import { openSqliteDatabase } from '../infrastructure/sqlite/database';
import { documentsOf } from './_ws-knowledge';
import { type Served, listen } from './_ws-server';

export async function serveReference(documents: number, synchronous: 'full' | 'normal' | 'off'): Promise<Served> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ws-ref-'));
  const db = openSqliteDatabase(path.join(dataDir, 'reference.db'), { synchronous });
  const events = new SqliteEventStore(db);
  const index = new SqliteSearchIndex(db);
  const engine = new ExtractiveAssistantEngine();
  const tenantId = randomUUID();
  const workspaceId = randomUUID();
  for (const document of documentsOf(documents)) {
    const documentId = randomUUID();
    const chunks = chunkText(document.text).map((chunk) => ({ chunk_id: `${documentId}:${chunk.ordinal}`, document_id: documentId, tenant_id: tenantId, workspace_id: workspaceId, title: document.title, ...chunk }));
    await index.replaceDocument(tenantId, documentId, chunks);
  }
  const key = randomBytes(32);
  const digest = (value: string): string => createHmac('sha256', key).update(value).digest('hex');
  const token = `wt_${randomBytes(24).toString('base64url')}`;
  const tokenDigest = digest(token);
  const assistant = { name: 'Assistant', instructions: '', language: 'en' };

  const server = http.createServer((_request, response) => response.writeHead(404).end());
  const sockets = new WebSocketServer({ server, path: '/ws/chat', maxPayload: 64 * 1024, perMessageDeflate: false, clientTracking: true });
  sockets.on('connection', (ws, request) => {
    const given = new URL(request.url ?? '/', 'http://reference.invalid').searchParams.get('token') ?? '';
    if (digest(given) !== tokenDigest) return ws.close(4401, 'invalid_widget_token');
    const send = (frame: unknown): void => ws.send(JSON.stringify(frame));
    let conversationId: string | null = null;
    let revision = -1;
    let busy = false;
    const metadata = (): EventMetadata => ({ tenant_id: tenantId, actor: { kind: 'end_user', id: 'visitor' }, request_id: null, correlation_id: 'reference', causation_id: null, occurred_at: new Date().toISOString(), ip: null });
    const append = async (list: Array<Omit<NewEvent, 'id' | 'metadata'>>): Promise<void> => {
      const result = await events.appendToStream(`conversation-${conversationId}`, list.map((event) => ({ ...event, id: randomUUID(), metadata: metadata() })), { expectedRevision: revision < 0 ? 'no_stream' : revision });
      revision = result.nextExpectedRevision;
    };
    ws.on('message', (data) => {
      void (async () => {
        const frame = JSON.parse(data.toString()) as { type: string; text?: string; visitor_id?: string };
        if (frame.type === 'resume') return send({ type: 'ready', conversation_id: null, messages: [] });
        if (frame.type !== 'message' || typeof frame.text !== 'string') return ws.close(4400, 'type');
        if (busy) return send({ type: 'error', code: 'turn_in_progress', message: 'one message at a time' });
        if (digest(given) !== tokenDigest) return ws.close(4401, 'invalid_widget_token');
        busy = true;
        const question = frame.text;
        const started = conversationId === null;
        conversationId ??= randomUUID();
        const userMessageId = randomUUID();
        const answerId = randomUUID();
        const postedAt = new Date().toISOString();
        await append([
          ...(started ? [{ type: 'ConversationStarted', data: { conversation_id: conversationId, tenant_id: tenantId, workspace_id: workspaceId, channel: 'widget', title: question } }] : []),
          { type: 'UserMessagePosted', data: { conversation_id: conversationId, tenant_id: tenantId, message_id: userMessageId, text: question, posted_at: postedAt } },
        ]);
        send({ type: 'message', conversation_id: conversationId, message: { id: userMessageId, role: 'user', text: question, citations: [], created_at: postedAt, failed: false, feedback_rating: null } });
        const hits = await index.search({ tenant_id: tenantId, workspace_ids: [workspaceId], text: question, limit: 5 });
        const passages: Passage[] = hits.map((hit, n) => ({ id: String(n + 1), document_id: hit.chunk.document_id, chunk_id: hit.chunk.chunk_id, title: hit.chunk.title, heading: hit.chunk.heading, text: hit.chunk.text }));
        let text = '';
        let cited: readonly string[] = [];
        for await (const chunk of engine.answer({ assistant, history: [], question, passages, tools: [], steps: [] })) {
          if (chunk.kind === 'delta') {
            text += chunk.text;
            send({ type: 'delta', message_id: answerId, text: chunk.text });
          } else if (chunk.kind === 'done') cited = chunk.cited;
        }
        const citations = cited.flatMap((id) => passages.filter((passage) => passage.id === id).map((passage) => ({ passage_id: passage.id, document_id: passage.document_id, chunk_id: passage.chunk_id, title: passage.title })));
        for (const citation of citations) send({ type: 'citation', message_id: answerId, citation });
        const answeredAt = new Date().toISOString();
        await append([{ type: 'AssistantAnswered', data: { conversation_id: conversationId, tenant_id: tenantId, message_id: answerId, reply_to: userMessageId, text, citations, answered_at: answeredAt } }]);
        send({ type: 'message', conversation_id: conversationId, message: { id: answerId, role: 'assistant', text, citations, created_at: answeredAt, failed: false, feedback_rating: null } });
        send({ type: 'done', conversation_id: conversationId, user_message_id: userMessageId, message_id: answerId, paused: false });
        busy = false;
      })().catch((error: unknown) => {
        console.error(error);
        ws.close(1011, 'internal_error');
      });
    });
  });
  const url = await listen(server);
  return {
    url,
    token,
    async close() {
      for (const ws of sockets.clients) ws.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await events.close();
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

