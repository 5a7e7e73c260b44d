// `npm run bench -- chat [--documents N] [--queries N] [--vocabulary N] [--seed N]`: the knowledge base at the
// size of a real tenant's, on the embedded adapters in a temporary data folder.
//
// Sections (each prints its own lines; add one by adding to SECTIONS):
// - indexing: N Markdown documents (default 1,000, about 10 chunks each) of realistic
//   support-site text, added through the command handler while the sagas stand still, then
//   indexed by the indexing saga as the platform runs it (saga delivery, blob store,
//   extractor, chunking, SQLite FTS5, the started and indexed events): wall time from the
//   sagas' start to the last DocumentIndexed, in chunks/s. Chunking alone is timed too.
// - search: questions made of the same vocabulary, answered in process by retrievePassages
//   (the permission check included) for the owner (every workspace) and for a member
//   granted two of four; then searchIndex.search alone. p50 / p90 / p99 / max in ms. The
//   target is p99 < 20 ms (issue #11).
// - chat turn: embedded-engine chat turns over HTTP (target p99 < 50 ms), through
//   bench/chat-turn.ts, over a SQLite FTS5 index holding the same chunks, asked the same
//   questions.
//
// Latencies are measured one request at a time (a user waits for one answer), after a
// warm-up, with process.hrtime; no assertion is made on them: the numbers go to
// docs/performance.md.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { handleCommand } from '../application/command-handling/handle-command';
import { chunkText } from '../application/knowledge/chunking';
import { retrievePassages } from '../application/knowledge/retrieval';
import { silentLogger } from '../application/ports/logger';
import { register } from '../application/registration/register';
import { systemContext } from '../application/shared/request-context';
import { membershipAggregate } from '../application/membership/memberships';
import type { Principal } from '../application/session/sessions';
import { createTeam, grantTeamWorkspaces, setTeamMembers } from '../application/team/teams';
import { createWorkspace, listTenantWorkspaces } from '../application/workspace/workspaces';
import { type DocumentCommand, documentDecider, documentEvents, documentStream } from '../domain/document/document';
import { membershipStream } from '../domain/membership/membership';
import { type Platform, createPlatform, loadConfig } from '../infrastructure/composition-root';
import { SqliteSearchIndex } from '../infrastructure/search-index/sqlite';
import { openSqliteDatabase } from '../infrastructure/sqlite/database';
import { measureChatTurns, reportChatTurns } from './chat-turn';

interface Options {
  documents: number;
  queries: number;
  seed: number;
  /** Made-up feature and part names (0: the support phrasing alone, the hardest case). */
  vocabulary: number;
}

interface BenchContext {
  options: Options;
  platform: Platform;
  dataDir: string;
  tenantId: string;
  ownerId: string;
  memberId: string;
  workspaces: string[];
  documents: SyntheticDocument[];
  questions: string[];
}

interface Section {
  name: string;
  run(context: BenchContext): Promise<void>;
}

const documentAggregate = { decider: documentDecider, events: documentEvents };

function parseOptions(args: string[]): Options {
  const read = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  return { documents: read('documents', 1000), queries: read('queries', 2000), seed: read('seed', 11), vocabulary: read('vocabulary', 5000) };
}

/** mulberry32: the same text for the same seed, so runs compare. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const PRODUCTS = [
  'kettle', 'router', 'thermostat', 'espresso machine', 'scooter', 'smart lock', 'printer', 'headphones', 'dishwasher', 'camera', 'e-bike', 'vacuum robot',
  'air purifier', 'baby monitor', 'dashcam', 'doorbell', 'drone', 'fridge', 'game console', 'hair dryer', 'laptop', 'microwave', 'projector', 'smartwatch',
];
const TOPICS = ['warranty', 'refunds', 'shipping', 'installation', 'firmware updates', 'troubleshooting', 'billing', 'account security', 'returns', 'maintenance', 'spare parts', 'subscriptions'];
const SUBJECTS = ['the customer', 'your order', 'the technician', 'the support team', 'the courier', 'the device', 'the mobile app', 'the invoice', 'the replacement unit', 'the account owner'];
const VERBS = ['needs', 'receives', 'checks', 'confirms', 'replaces', 'resets', 'registers', 'ships', 'charges', 'updates', 'cancels', 'restores'];
const OBJECTS = ['the serial number', 'a prepaid label', 'the original receipt', 'the latest firmware', 'a refund to the card', 'the filter cartridge', 'a new password', 'the power adapter', 'a pickup slot', 'the monthly plan', 'the battery pack', 'the pairing code'];
const CONDITIONS = [
  'within thirty days of delivery',
  'before the warranty ends',
  'when the status light blinks red',
  'after the device restarts',
  'if the parcel arrives damaged',
  'once the payment is confirmed',
  'unless the seal is broken',
  'during the first year',
  'while the app shows an error',
  'as soon as the courier scans it',
];
const ASIDES = ['Keep the packaging until then.', 'This usually takes two working days.', 'Contact us if anything is unclear.', 'The same applies to refurbished units.', 'Business customers follow the same steps.'];
const SYLLABLES = ['ka', 'lo', 'mi', 'tra', 'ven', 'sol', 'dur', 'pex', 'qui', 'bra', 'nor', 'ze', 'fil', 'gan', 'ro', 'sta', 'ple', 'vi', 'mon', 'tek', 'cor', 'lin', 'dra', 'fu'];

export interface SyntheticDocument {
  title: string;
  text: string;
  /** The feature and part names it is about. */
  topic: string[];
}

/**
 * A support site's knowledge base: the phrasing of support articles (refunds, shipping,
 * warranty ... of two dozen products) around the names of features and parts, drawn from
 * a vocabulary of `vocabulary` made-up words with Zipf's law (a few everywhere, most rare),
 * each document about its own handful of them, as real manuals are. Questions ask both
 * ways: in the support phrasing, and about a document's features. `vocabulary` 0 leaves
 * only the support phrasing: about a hundred words in every document, so every question
 * word is in a third to two thirds of the chunks, the hardest case for BM25's cost.
 */
export class SyntheticCorpus {
  private readonly words: string[] = [];
  private readonly cumulative: number[] = [];

  constructor(
    private readonly next: () => number,
    vocabulary: number,
  ) {
    const seen = new Set<string>();
    while (seen.size < vocabulary) {
      const syllables = 2 + Math.floor(next() * 2);
      seen.add(Array.from({ length: syllables }, () => this.pick(SYLLABLES)).join(''));
    }
    this.words = [...seen];
    let total = 0;
    for (let rank = 1; rank <= this.words.length; rank += 1) {
      total += 1 / rank;
      this.cumulative.push(total);
    }
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  /** A word by Zipf's law: rank r with weight 1/r. */
  private zipfWord(): string {
    const target = this.next() * this.cumulative[this.cumulative.length - 1];
    let low = 0;
    let high = this.cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return this.words[low];
  }

  document(index: number): SyntheticDocument {
    const capital = (text: string): string => `${text[0].toUpperCase()}${text.slice(1)}`;
    const product = PRODUCTS[index % PRODUCTS.length];
    const title = `${capital(product)} guide ${index + 1}`;
    const topic = this.words.length === 0 ? [] : [...new Set(Array.from({ length: 16 }, () => (this.next() < 0.5 ? this.zipfWord() : this.pick(this.words))))];
    const feature = (): string => (this.next() < 0.7 ? this.pick(topic) : this.zipfWord());
    const lines: string[] = [`# ${title}`, ''];
    const sections = 5 + Math.floor(this.next() * 3);
    for (let section = 0; section < sections; section += 1) {
      const heading = topic.length > 0 && this.next() < 0.5 ? `The ${feature()} ${feature()}` : `${capital(this.pick(TOPICS))} for the ${product}`;
      lines.push(`## ${heading}`, '');
      const paragraphs = 2 + Math.floor(this.next() * 2);
      for (let paragraph = 0; paragraph < paragraphs; paragraph += 1) {
        const sentences = 3 + Math.floor(this.next() * 3);
        const text = Array.from({ length: sentences }, () => {
          const sentence =
            topic.length > 0 && this.next() < 0.5
              ? `${this.pick(SUBJECTS)} ${this.pick(VERBS)} the ${feature()} ${feature()} of the ${product} ${this.pick(CONDITIONS)}.`
              : `${this.pick(SUBJECTS)} ${this.pick(VERBS)} ${this.pick(OBJECTS)} for the ${product} ${this.pick(CONDITIONS)}.`;
          return `${capital(sentence)}${this.next() < 0.3 ? ` ${this.pick(ASIDES)}` : ''}`;
        }).join(' ');
        lines.push(text, '');
      }
    }
    return { title, text: lines.join('\n'), topic };
  }

  questions(documents: readonly SyntheticDocument[], count: number): string[] {
    const phrased = [
      () => `How do I get ${this.pick(OBJECTS)} for my ${this.pick(PRODUCTS)}?`,
      () => `What happens to ${this.pick(OBJECTS)} ${this.pick(CONDITIONS)}?`,
      () => `${this.pick(TOPICS)} ${this.pick(PRODUCTS)}`,
      () => `Does ${this.pick(SUBJECTS)} need ${this.pick(OBJECTS)} ${this.pick(CONDITIONS)}?`,
      () => `${this.pick(PRODUCTS)} ${this.pick(TOPICS)} ${this.pick(OBJECTS)} ${this.pick(CONDITIONS)}`,
    ];
    const about = (document: SyntheticDocument) => [
      () => `How do I reset the ${this.pick(document.topic)} ${this.pick(document.topic)} on my ${PRODUCTS[documents.indexOf(document) % PRODUCTS.length]}?`,
      () => `${this.pick(document.topic)} ${this.pick(document.topic)}`,
      () => `What is the ${this.pick(document.topic)} for, and does ${this.pick(SUBJECTS)} need it ${this.pick(CONDITIONS)}?`,
    ];
    return Array.from({ length: count }, () => {
      const document = this.pick(documents);
      return document.topic.length > 0 && this.next() < 0.6 ? this.pick(about(document))() : this.pick(phrased)();
    });
  }
}

function percentiles(samples: number[]): { p50: number; p90: number; p99: number; max: number } {
  const sorted = [...samples].sort((left, right) => left - right);
  const at = (fraction: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1] };
}

const ms = (value: number): string => value.toFixed(2);

async function timedEach(items: readonly string[], work: (item: string) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (const item of items) {
    const started = process.hrtime.bigint();
    await work(item);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples;
}

function printLatency(label: string, samples: number[]): void {
  const { p50, p90, p99, max } = percentiles(samples);
  console.log(`  ${label.padEnd(46)} p50 ${ms(p50)} ms  p90 ${ms(p90)} ms  p99 ${ms(p99)} ms  max ${ms(max)} ms  (${samples.length} queries)`);
}

/** An organization with four workspaces and a member whose team is granted two of them, made through the use cases. */
async function organization(platform: Platform): Promise<Pick<BenchContext, 'tenantId' | 'ownerId' | 'memberId' | 'workspaces'>> {
  const context = systemContext('bench');
  const { identity } = platform;
  const owner = await register(identity, { email: 'owner@bench.test', password: 'correct horse battery', name: 'Owner', organization_name: 'Bench Org', slug: 'bench-org' }, context);
  const member = await register(identity, { email: 'member@bench.test', password: 'correct horse battery', name: 'Member', organization_name: 'Member Org', slug: 'member-org' }, context);
  const joined = await handleCommand(identity, membershipAggregate, membershipStream(owner.tenant_id), { type: 'AddMember', data: { tenant_id: owner.tenant_id, user_id: member.user_id, role: 'member' } }, context);
  await platform.readYourWrites(joined.position);
  const principal: Principal = { kind: 'user', user_id: owner.user_id, tenant_id: owner.tenant_id, role: 'owner', jti: 'bench' };
  const workspaces = (await listTenantWorkspaces(identity, owner.tenant_id)).map((workspace) => workspace.id);
  for (const name of ['Sales', 'Support', 'Engineering']) workspaces.push((await createWorkspace(identity, principal, name, context)).id);
  const team = await createTeam(identity, principal, { name: 'Support team' }, context);
  await setTeamMembers(identity, principal, team.value.id, [{ user_id: member.user_id }], context);
  await grantTeamWorkspaces(identity, principal, team.value.id, workspaces.slice(0, 2), context);
  await platform.readYourWrites(await platform.eventStore.headPosition());
  return { tenantId: owner.tenant_id, ownerId: owner.user_id, memberId: member.user_id, workspaces };
}

const indexing: Section = {
  name: 'indexing',
  async run({ platform, tenantId, ownerId, workspaces, documents: texts }) {
    const documents = texts.map((text, index) => ({ id: randomUUID(), workspace: workspaces[index % workspaces.length], ...text }));
    const characters = documents.reduce((sum, document) => sum + document.text.length, 0);

    const chunkingStarted = process.hrtime.bigint();
    const chunkCount = documents.reduce((sum, document) => sum + chunkText(document.text).length, 0);
    const chunkingSeconds = Number(process.hrtime.bigint() - chunkingStarted) / 1e9;

    // The documents are added while the sagas stand still, so the indexing is timed on its own:
    // a backlog of documents, as after a bulk upload, worked off by the saga.
    await platform.sagas.stop();
    const from = await platform.eventStore.headPosition();
    const addingStarted = process.hrtime.bigint();
    const context = { ...systemContext('bench'), tenant_id: tenantId, actor: { kind: 'user' as const, id: ownerId } };
    for (const document of documents) {
      const bytes = Buffer.from(document.text);
      const blobKey = `${tenantId}/${document.id}`;
      await platform.blobStore.put(blobKey, bytes, 'text/markdown');
      const command: DocumentCommand = {
        type: 'AddDocument',
        data: {
          document_id: document.id,
          tenant_id: tenantId,
          workspace_id: document.workspace,
          title: document.title,
          source: 'upload',
          filename: `${document.title}.md`,
          content_type: 'text/markdown',
          size_bytes: bytes.length,
          sha256: 'bench',
          blob_key: blobKey,
          added_by: ownerId,
        },
      };
      await handleCommand(platform.commands, documentAggregate, documentStream(document.id), command, context);
    }
    const addedSeconds = Number(process.hrtime.bigint() - addingStarted) / 1e9;
    const started = process.hrtime.bigint();
    await platform.sagas.start();
    let indexed = 0;
    let failed = 0;
    let indexedChunks = 0;
    let position = from;
    while (indexed + failed < documents.length) {
      const outcomes = await platform.eventStore.readAll({ fromPosition: position, maxCount: 1000, filter: { kind: 'event_type', types: ['DocumentIndexed', 'DocumentIndexingFailed'] } });
      for (const event of outcomes) {
        position = event.position;
        if (event.type === 'DocumentIndexed') {
          indexed += 1;
          indexedChunks += event.data.chunks;
        } else failed += 1;
      }
      if (outcomes.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(`  documents ${documents.length}, characters ${characters.toLocaleString('en')}, chunks ${chunkCount.toLocaleString('en')} (chunking alone: ${(chunkCount / chunkingSeconds).toFixed(0)} chunks/s)`);
    console.log(`  added through the command handler in ${addedSeconds.toFixed(2)} s (${(documents.length / addedSeconds).toFixed(0)} documents/s, sagas stopped); then indexed by the saga in ${seconds.toFixed(2)} s`);
    console.log(`  indexing throughput: ${(indexedChunks / seconds).toFixed(0)} chunks/s, ${(indexed / seconds).toFixed(1)} documents/s (${indexed} indexed, ${failed} failed)`);
    if (failed > 0 || indexedChunks !== chunkCount) throw new Error(`expected ${chunkCount} chunks of ${documents.length} documents, indexed ${indexedChunks} of ${indexed}`);
  },
};

const search: Section = {
  name: 'search',
  async run({ options, platform, tenantId, ownerId, memberId, workspaces, questions: asked }) {
    const deps = { readStore: platform.readStore, searchIndex: platform.searchIndex, embeddings: platform.embeddings };
    const owner = { tenant_id: tenantId, user_id: ownerId, role: 'owner' as const };
    const member = { tenant_id: tenantId, user_id: memberId, role: 'member' as const };
    const warmUp = asked.slice(0, Math.min(200, asked.length));
    for (const question of warmUp) await retrievePassages(deps, owner, question);
    let empty = 0;
    const ownerSamples = await timedEach(asked, async (question) => {
      if ((await retrievePassages(deps, owner, question)).length === 0) empty += 1;
    });
    printLatency('retrievePassages, owner (4 workspaces)', ownerSamples);
    printLatency('retrievePassages, member (2 of 4 workspaces)', await timedEach(asked, (question) => retrievePassages(deps, member, question)));
    printLatency('searchIndex.search alone (4 workspaces)', await timedEach(asked, (text) => platform.searchIndex.search({ tenant_id: tenantId, workspace_ids: workspaces, text, limit: 5 })));
    console.log(`  questions without a passage: ${empty} of ${asked.length}; target: p99 < 20 ms (${options.queries} queries each)`);
  },
};

/**
 * The chat turn over HTTP with the embedded engine (target p99 < 50 ms), through
 * bench/chat-turn.ts's `measureChatTurns`: its own platform and organization, whose search
 * index here is a SQLite FTS5 index holding the same documents' chunks (indexed directly,
 * not through the saga: the indexing was measured above), asked the same questions.
 */
const chatTurn: Section = {
  name: 'chat turn',
  async run({ options, dataDir, documents, questions: asked }) {
    const db = openSqliteDatabase(path.join(dataDir, 'chat-turn-index.db'), { synchronous: 'normal' });
    try {
      const measure = await measureChatTurns({
        indexFor: async (tenantId, workspaceId) => {
          const index = new SqliteSearchIndex(db);
          for (const [number, document] of documents.entries()) {
            const documentId = `bench-${number}`;
            const chunks = chunkText(document.text).map((chunk) => ({ ...chunk, chunk_id: `${documentId}:${chunk.ordinal}`, document_id: documentId, tenant_id: tenantId, workspace_id: workspaceId, title: document.title }));
            await index.replaceDocument(tenantId, documentId, chunks);
          }
          return index;
        },
        turns: Math.min(options.queries, 1000),
        warmup: 50,
        questions: asked,
      });
      reportChatTurns('chat turn over the indexed knowledge (embedded engine, SQLITE_SYNCHRONOUS=full)', measure);
    } finally {
      db.close();
    }
  },
};

const SECTIONS: Section[] = [indexing, search, chatTurn];

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-chat-'));
  const platform = await createPlatform(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '12', SQLITE_SYNCHRONOUS: 'full' }), { logger: silentLogger });
  try {
    await platform.start();
    const org = await organization(platform);
    const corpus = new SyntheticCorpus(random(options.seed), options.vocabulary);
    const documents = Array.from({ length: options.documents }, (_, index) => corpus.document(index));
    const context: BenchContext = { options, platform, dataDir, ...org, documents, questions: corpus.questions(documents, options.queries) };
    console.log(
      `chat bench: ${options.documents} documents, ${options.queries} questions, vocabulary ${options.vocabulary}, embedded adapters, Node ${process.version}, ${os.cpus().length} CPUs`,
    );
    for (const section of SECTIONS) {
      console.log(`${section.name}:`);
      await section.run(context);
    }
  } finally {
    await platform.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
