// `npm run bench -- chat-turn [--turns 1000] [--warmup 50] [--synchronous full|normal]`
//
// Chat turns over HTTP with the embedded extractive engine: one client asking one question
// after another (`POST /api/v1/chat`, ten turns per conversation, then a new one), as a
// user does, on the embedded platform with its Koa app on a node:http server. Reports the
// turn's latency percentiles as the client sees them. The target (issue #11): p99 under
// 50 ms with 1,000 documents (about 10,000 chunks) indexed.
//
// `measureChatTurns` takes the search index, so the full chat bench runs it on the real index
// with the knowledge indexed. Run alone, it uses `fixedPassages`: an index that answers five
// passages of about a hundred words at once, whatever is asked, which isolates what a turn
// costs besides the search (quota and access reads, three appends, read-your-writes, the
// engine, HTTP): the search's own p99 adds to it.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { handleCommand } from '../application/command-handling/handle-command';
import { silentLogger } from '../application/ports/logger';
import type { SearchHit, SearchIndex } from '../application/ports/search-index';
import { setQuotaOverrides } from '../application/quota-override/quota-overrides';
import { register } from '../application/registration/register';
import { login } from '../application/session/login';
import { systemContext } from '../application/shared/request-context';
import { userAggregate } from '../application/user/users';
import { userStream } from '../domain/user/user';
import { createPlatform, loadConfig } from '../infrastructure/composition-root';

const PASSWORD = 'bench password 123';
const TURNS_PER_CONVERSATION = 10;
const TARGET_P99_MS = 50;

const QUESTIONS = [
  'How long do refunds take?',
  'Can I return a gift card?',
  'Where do orders ship from?',
  'How much does delivery to Canada cost?',
  'What are the opening hours of the office?',
  'Is the warranty two years?',
  'What is the weather in Paris?',
];

const SENTENCES = [
  'Refunds are issued within 14 days of the request, to the card you paid with.',
  'Gift cards cannot be returned or refunded once they have been activated.',
  'Orders ship from our warehouse in Lyon within two business days of payment.',
  'Delivery to Canada costs 19 euros and takes five to eight business days.',
  'The office is open Monday to Friday from 9:00 to 17:00, closed on public holidays.',
  'Every product carries a two-year warranty covering manufacturing defects.',
];

/** A search index answering five fixed passages of about a hundred words, at once. */
export function fixedPassages(tenantId: string, workspaceId: string): SearchIndex {
  const hits: SearchHit[] = Array.from({ length: 5 }, (_, n) => ({
    score: 5 - n,
    chunk: {
      chunk_id: `bench-doc-${n}:0`,
      document_id: `bench-doc-${n}`,
      tenant_id: tenantId,
      workspace_id: workspaceId,
      title: `Customer guide part ${n + 1}`,
      ordinal: 0,
      heading: null,
      text: Array.from({ length: 6 }, (_, k) => SENTENCES[(n + k) % SENTENCES.length]).join(' '),
    },
  }));
  return {
    replaceDocument: () => Promise.reject(new Error('fixed passages')),
    removeDocument: () => Promise.reject(new Error('fixed passages')),
    search: async (query) => (query.tenant_id === tenantId && query.workspace_ids.includes(workspaceId) ? hits.slice(0, query.limit) : []),
  };
}

export interface ChatTurnMeasure {
  turns: number;
  /** Milliseconds, sorted. */
  latencies: number[];
  answeredFromKnowledge: number;
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * Runs `turns` chat turns (after `warmup` unmeasured ones) against a platform whose search
 * index `indexFor` makes for the bench organization's default workspace (after `prepare`,
 * for instance indexing the knowledge).
 */
export async function measureChatTurns(options: {
  indexFor: (tenantId: string, workspaceId: string) => SearchIndex | Promise<SearchIndex>;
  turns: number;
  warmup: number;
  questions?: readonly string[];
  /** SQLITE_SYNCHRONOUS of the embedded store (default `full`, as production's default). */
  synchronous?: 'full' | 'normal';
}): Promise<ChatTurnMeasure> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-chat-'));
  // The index is chosen once the organization exists: a deferring index until then.
  let index: SearchIndex | null = null;
  const deferring: SearchIndex = {
    replaceDocument: (...args) => index!.replaceDocument(...args),
    removeDocument: (...args) => index!.removeDocument(...args),
    search: (query) => (index ? index.search(query) : Promise.resolve([])),
  };
  const platform = await createPlatform(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '12', SQLITE_SYNCHRONOUS: options.synchronous ?? 'full' }), { logger: silentLogger, searchIndex: deferring });
  const server = await platform.httpServer();
  try {
    await platform.start();
    const { identity } = platform;
    const context = systemContext('bench');
    const owner = await register(identity, { email: 'owner@chat.bench', password: PASSWORD, name: 'Owner', organization_name: 'Chat Bench', slug: 'chat-bench' }, context);
    await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'IssueOtp', data: { purpose: 'email_verification', code_hash: 'bench', expires_at: '2999-01-01T00:00:00Z' } }, context);
    await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'bench' } }, context);
    await setQuotaOverrides(identity, 'bench', owner.tenant_id, { overrides: { messages_per_month: null }, reason: 'bench' }, context);
    await platform.readYourWrites(await platform.eventStore.headPosition());
    const workspaces = await platform.readStore.collection('workspaces').find({ where: { tenant_id: owner.tenant_id }, limit: 10 });
    index = await options.indexFor(owner.tenant_id, workspaces.items[0].id);
    const { token } = await login(identity, 'owner@chat.bench', PASSWORD, owner.tenant_id, context);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/chat`;
    const questions = options.questions ?? QUESTIONS;
    let conversationId: string | null = null;
    let inConversation = 0;
    const latencies: number[] = [];
    let answeredFromKnowledge = 0;
    for (let turn = 0; turn < options.warmup + options.turns; turn += 1) {
      const body = JSON.stringify({ message: questions[turn % questions.length], conversation_id: conversationId });
      const started = performance.now();
      const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
      const answer = (await response.json()) as { conversation_id: string; answer: { answered_from_knowledge: boolean } };
      const elapsed = performance.now() - started;
      if (response.status !== 200) throw new Error(`a turn answered ${response.status}: ${JSON.stringify(answer)}`);
      inConversation += 1;
      conversationId = inConversation >= TURNS_PER_CONVERSATION ? null : answer.conversation_id;
      if (inConversation >= TURNS_PER_CONVERSATION) inConversation = 0;
      if (turn < options.warmup) continue;
      latencies.push(elapsed);
      if (answer.answer.answered_from_knowledge) answeredFromKnowledge += 1;
    }
    return { turns: options.turns, latencies: latencies.sort((a, b) => a - b), answeredFromKnowledge };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await platform.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

export function reportChatTurns(name: string, measure: ChatTurnMeasure): boolean {
  const { latencies } = measure;
  const p99 = percentile(latencies, 99);
  console.log('');
  console.log('| turns | p50 ms | p95 ms | p99 ms | max ms | answered from knowledge |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| ${measure.turns} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 95).toFixed(1)} | ${p99.toFixed(1)} | ${latencies[latencies.length - 1].toFixed(1)} | ${measure.answeredFromKnowledge} |`,
  );
  console.log('');
  const held = p99 < TARGET_P99_MS;
  console.log(`${name}: p99 ${p99.toFixed(1)} ms ${held ? '<' : '>='} ${TARGET_P99_MS} ms target`);
  return held;
}

export async function run(args: string[]): Promise<void> {
  const flag = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  const at = args.indexOf('--synchronous');
  const synchronous = at >= 0 && args[at + 1] === 'normal' ? 'normal' : 'full';
  const measure = await measureChatTurns({ indexFor: fixedPassages, turns: flag('turns', 1000), warmup: flag('warmup', 50), synchronous });
  if (!reportChatTurns(`chat turn besides the search (embedded engine, fixed passages, SQLITE_SYNCHRONOUS=${synchronous})`, measure)) process.exitCode = 1;
}
