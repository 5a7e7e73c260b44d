// The operator CLI: `npm run cli -- <command>`. It opens the same stores as the server
// (DATA_DIR, or EVENTSTORE_URL / MONGODB_URL) and may run beside it: it runs only the
// projections no server holds a lease on (waiting for the others' stored checkpoints), and
// projection commits are compare-and-set on the checkpoint, so a rebuild here and the
// server's runner never interleave.

import 'reflect-metadata';
import {
  BackupError,
  ConfigError,
  DataFolderError,
  KEYS_FILE,
  type Platform,
  type PlatformOverrides,
  backUpEmbeddedStore,
  createPlatform,
  currentTokenPublicKey,
  generateTokenKey,
  loadConfig,
  verifyEmbeddedBackup,
} from '../../infrastructure/composition-root';
import { silentLogger } from '../../application/ports/logger';
import { systemContext } from '../../application/shared/request-context';
import { createTenant, renameTenant, suspendTenant, unsuspendTenant } from '../../application/tenant/tenant-commands';
import { listTenants } from '../../application/tenant/tenant-queries';
import type { RecordedEvent } from '../../application/ports/event-store';
import { leaseIsLive } from '../../application/ports/read-store';
import { runConnectorDoctor } from './connector-doctor';
import { parseArguments, printTable } from './format';
import { type PlanView, listPlans, seedPlanCatalogue } from '../../application/plan/plans';
import { tenantQuotas } from '../../application/quota-override/quota-overrides';
import { QUOTAS } from '../../domain/plan/plan';
import { documentStatusCounts } from '../../application/document/documents';
import { askAsOperator } from '../../application/chat/chat';
import { eraseConversationOf } from '../../application/conversation/conversations';
import { eraseLeadOf } from '../../application/lead/lead-erasure';
import { eraseToolCallOf } from '../../application/tool-call/tool-call-erasure';
import { eraseInvitationOf } from '../../application/invitation/invitation-erasure';
import { eraseEndUserOf } from '../../application/personal-data/end-user-erasure';
import { erasePayloadsOf } from '../../application/orchestration/payload-retention';
import { redriveOrchestrationEvents } from '../../application/orchestration/redrive';
import { listSdkConnectionSchedules, listSdkConnections } from '../../application/sdk-connection/sdk-connections';
import {
  LIST_MAX_LIMIT,
  type OrchestrationEventFilter,
  type OrchestrationEventView,
  correlationFilter,
  getOrchestrationEvent,
  listOrchestrationEvents,
  nameFilter,
  replayOrchestrationEventAsOperator,
  retryOrchestrationEventAsOperator,
  statusFilter,
  timeRange,
} from '../../application/orchestration/orchestration-events';
import { DomainError, messageOf } from '../../domain/shared/errors';

const USAGE = `usage: npm run cli -- <command>

  projections status                 checkpoint, head, lag, state and lease holder of every projection
  projections rebuild NAME           rebuild NAME into shadow collections, then swap
  events read STREAM [--backwards] [--from REVISION] [--limit N]   events as stored (not upcast)
  events tail [--from POSITION] [--limit N]   follow $all as stored (from the end unless --from)
  tenants list [--limit N]
  tenants create --name NAME --slug SLUG
  tenants rename ID NAME
  tenants suspend ID --reason TEXT
  tenants unsuspend ID
  tenants quotas ID                  plan limits, overrides, what applies and what is used
  plans list [--all]                 sellable plans, cheapest first (--all: retired ones too)
  documents status [--tenant ID]     documents and chunks per tenant and indexing status (indexing progress)
  chat ask --tenant ID [--workspace ID] [--conversation ID] "question"
                                     ask the tenant's assistant as the operator (every workspace); prints the answer and its sources
  erase conversation ID --tenant ID  erase a conversation and its tool calls for the organization (its texts
                                     unreadable for good; also for a deleted organization: docs/personal-data.md)
  erase lead ID --tenant ID          erase a lead, and the conversation it was left in, for the organization
  erase tool-call ID --tenant ID     erase a tool call for the organization (a flow's step, a test: its arguments
                                     and exchange unreadable for good)
  erase invitation ID --tenant ID    erase an invitation for the organization (the invitee's email unreadable for good)
  erase end-user --tenant ID (--verified-user-id ID | --whatsapp-number NUMBER)
                                     erase everything of one end user for the organization: their conversations,
                                     leads and WhatsApp messages
  erase orchestration-payloads --tenant ID --before YYYY-MM-DD
                                     erase the payloads, outputs and error messages of the organization's orchestration events
                                     received before that day (yesterday at the latest); prints the days erased
  events orchestration list --tenant ID [--status S] [--name N] [--correlation-id C]
                            [--from T] [--to T] [--limit N] [--cursor C]
                                     the tenant's orchestration events, newest first
                                     (--correlation-id: one chain, its root and what it caused;
                                     --from/--to: received in [from, to), ISO 8601)
  events orchestration show ID --tenant ID     envelope, status, every attempt with its error and steps, replays
  events orchestration retry ID --tenant ID    re-queues a failed or dead-lettered event
  events orchestration replay ID --tenant ID [--reason TEXT]   a new event replaying it; prints the new id
  events orchestration redrive --tenant ID [--status dead_letter|failed] [--name N] [--from T] [--to T]
                                     re-queues every such event (dead letters by default), oldest first
  connections list --tenant ID       the organization's SDK connections: status, what they advertised, the last sync
  connections schedules ID --tenant ID
                                     each schedule the connection advertised: its next run, or why it does not run
  sagas failures                     deliveries retrying or dead-lettered
  keys public                        the public half (PASERK k4.public) of the token key in use
  keys generate                      a new token key (TOKEN_SECRET_KEY) and its public half
  connector doctor URL --secret S    run the protocol conformance checks against a connector
  backup DEST                        copy the embedded data folder into the new folder DEST while
                                     servers keep running (README, "Backups")
  verify-backup DIR                  check a backup folder against its manifest (exit 1 when it is not whole)
`;

type Output = (line: string) => void;

/** The operator's actor in what the CLI records. */
const OPERATOR_CLI = 'operator-cli';

async function withPlatform<T>(work: (platform: Platform) => Promise<T>, overrides: PlatformOverrides = {}): Promise<T> {
  // The CLI's commands run projections here, in this thread, when they bring read models up to date: no projection thread.
  const platform = await createPlatform(loadConfig({ ...process.env, PROJECTION_THREAD: 'main' }), { logger: silentLogger, ...overrides });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

/** Brings read models up to date before reading them, in case no server is running. */
async function caughtUp(platform: Platform): Promise<void> {
  await platform.projections.start();
  await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
  await platform.projections.stop();
}

function formatEvent(event: RecordedEvent): string {
  return JSON.stringify({
    position: event.position,
    stream: event.stream,
    revision: event.revision,
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    recorded_at: event.recorded_at,
  });
}

/** `platform`: for tests, what the platform uses instead of the configured parts (a search index). */
export async function runCli(argv: string[], out: Output, stopSignal?: AbortSignal, options: { platform?: PlatformOverrides } = {}): Promise<number> {
  const [area, action, ...rest] = argv;
  const { positional, flags } = parseArguments(rest);
  const context = systemContext(`cli-${Date.now()}`, OPERATOR_CLI);
  // The commands whose first word is all: `backup DEST`, `verify-backup DIR`.
  if (area === 'backup') return backup(action === undefined ? [] : [action, ...rest], out);
  if (area === 'verify-backup') return verifyBackupFolder(action === undefined ? [] : [action, ...rest], out);
  switch (`${area} ${action}`) {
    case 'projections status':
      return withPlatform(async (platform) => {
        const reports = await platform.projections.status();
        const sagas = (await platform.readStore.listProjectionStates()).filter((state) => state.name.startsWith('saga:'));
        const now = platform.clock.now();
        // holder: the process whose lease runs it now ('-' when none does: no server, or its lease lapsed).
        printTable(out, ['projection', 'version', 'checkpoint', 'head', 'lag', 'status', 'holder', 'error'], [
          ...reports.map((r) => [r.name, r.version, r.checkpoint, r.head, r.lag, r.status, r.holder ?? '-', r.error ?? '']),
          ...sagas.map((s) => [s.name, s.version, s.checkpoint, reports[0]?.head ?? '', '', s.status, leaseIsLive(s.lease, now) ? s.lease.holder : '-', s.error ?? '']),
        ]);
        return 0;
      });
    case 'projections rebuild': {
      const name = positional[0];
      if (!name) return usageError(out, 'projections rebuild needs a projection NAME');
      return withPlatform(async (platform) => {
        const known = platform.projections.projections.map((p) => p.name);
        if (!known.includes(name)) return usageError(out, `no projection named ${name}; known: ${known.join(', ')}`);
        const result = await platform.projections.rebuild(name);
        out(`rebuilt ${name}: ${result.events} events, checkpoint ${result.checkpoint}`);
        return 0;
      });
    }
    case 'events read': {
      const stream = positional[0];
      if (!stream) return usageError(out, 'events read needs a STREAM');
      return withPlatform(async (platform) => {
        // As stored (with metadata.schema_version), not decoded: what an operator needs to see an event a projection cannot read.
        const events = await platform.storedEvents.readStream(stream, {
          direction: flags.backwards ? 'backwards' : 'forwards',
          fromRevision: flags.from !== undefined ? Number(flags.from) : undefined,
          maxCount: flags.limit !== undefined ? Number(flags.limit) : undefined,
        });
        if (events.length === 0) out(`stream ${stream} has no events`);
        for (const event of events) out(formatEvent(event));
        return 0;
      });
    }
    case 'events tail':
      return withPlatform(async (platform) => {
        const from = flags.from !== undefined ? Number(flags.from) : await platform.eventStore.headPosition();
        const limit = flags.limit !== undefined ? Number(flags.limit) : Infinity;
        const subscription = platform.storedEvents.subscribeToAll({ fromPosition: from });
        const stop = (): void => void subscription.stop();
        process.once('SIGINT', stop);
        stopSignal?.addEventListener('abort', stop);
        let shown = 0;
        for await (const message of subscription) {
          if (message.kind !== 'event') continue;
          out(formatEvent(message.event));
          shown += 1;
          if (shown >= limit) break;
        }
        await subscription.stop();
        process.off('SIGINT', stop);
        return 0;
      });
    case 'plans list':
      return withPlatform(async (platform) => {
        await seedPlanCatalogue(platform.commands);
        await caughtUp(platform);
        const page = await listPlans(platform, { status: flags.all === true ? undefined : 'sellable' }, { limit: 1000 });
        const money = (plan: PlanView, interval: 'month' | 'year'): string => {
          const price = plan.prices.find((candidate) => candidate.interval === interval);
          return price ? `${(price.amount / 100).toFixed(2)} ${price.currency}` : '-';
        };
        const limit = (value: number | null): string => (value === null ? 'unlimited' : String(value));
        const features = (plan: PlanView): string => (Object.entries(plan.features).filter(([, on]) => on).map(([feature]) => feature).join(',') || '-');
        printTable(
          out,
          ['id', 'code', 'name', 'status', 'month', 'year', 'messages/month', 'documents', 'users', 'tools', 'features'],
          page.items.map((plan) => [
            plan.id,
            plan.code,
            plan.name,
            plan.status,
            money(plan, 'month'),
            money(plan, 'year'),
            limit(plan.limits.messages_per_month),
            limit(plan.limits.documents),
            limit(plan.limits.users),
            limit(plan.limits.business_tools),
            features(plan),
          ]),
        );
        return 0;
      });
    case 'tenants quotas': {
      const [id] = positional;
      if (!id) return usageError(out, 'tenants quotas needs a tenant ID');
      return withPlatform(async (platform) => {
        await seedPlanCatalogue(platform.commands);
        await caughtUp(platform);
        const quotas = await tenantQuotas(platform, id);
        out(`tenant ${quotas.tenant_id} on plan ${quotas.plan.code} (${quotas.plan.name})${quotas.overrides_reason ? `; overrides: ${quotas.overrides_reason}` : ''}`);
        const shown = (value: number | null | undefined): string => (value === undefined ? '-' : value === null ? 'unlimited' : String(value));
        printTable(
          out,
          ['quota', 'plan', 'override', 'applies', 'used'],
          QUOTAS.map((quota) => [quota, shown(quotas.plan_limits[quota]), shown(quotas.overrides[quota]), shown(quotas.limits[quota]), quotas.used[quota]]),
        );
        out(`messages are counted per calendar month (UTC); the count starts again at ${quotas.messages_reset_at}`);
        return 0;
      });
    }
    case 'tenants list':
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        const tenants = await listTenants(platform, { limit: Number(flags.limit ?? 100) });
        printTable(out, ['id', 'slug', 'name', 'status', 'created_at'], tenants.map((t) => [t.id, t.slug, t.name, t.status, t.created_at]));
        return 0;
      });
    case 'tenants create': {
      const name = flags.name;
      const slug = flags.slug;
      if (typeof name !== 'string' || typeof slug !== 'string') return usageError(out, 'tenants create needs --name and --slug');
      return withPlatform(async (platform) => {
        const result = await createTenant(platform.commands, { name, slug }, context);
        out(`created tenant ${result.tenant_id} (${slug}) at position ${result.position}`);
        return 0;
      });
    }
    case 'tenants rename': {
      const [id, ...words] = positional;
      if (!id || words.length === 0) return usageError(out, 'tenants rename needs ID and NAME');
      return withPlatform(async (platform) => {
        const result = await renameTenant(platform.commands, id, words.join(' '), context);
        out(result.events.length ? `renamed tenant ${id} (revision ${result.revision})` : `tenant ${id} already has that name`);
        return 0;
      });
    }
    case 'tenants suspend': {
      const id = positional[0];
      const reason = flags.reason;
      if (!id || typeof reason !== 'string') return usageError(out, 'tenants suspend needs ID and --reason');
      return withPlatform(async (platform) => {
        await suspendTenant(platform.commands, id, reason, context);
        out(`suspended tenant ${id}`);
        return 0;
      });
    }
    case 'tenants unsuspend': {
      const id = positional[0];
      if (!id) return usageError(out, 'tenants unsuspend needs ID');
      return withPlatform(async (platform) => {
        await unsuspendTenant(platform.commands, id, context);
        out(`unsuspended tenant ${id}`);
        return 0;
      });
    }
    case 'documents status': {
      const tenant = flags.tenant;
      if (tenant === true) return usageError(out, 'documents status --tenant needs a tenant ID');
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        const counts = await documentStatusCounts(platform, tenant);
        printTable(out, ['tenant', 'slug', 'status', 'documents', 'chunks'], counts.map((count) => [count.tenant_id, count.tenant_slug ?? '-', count.status, count.documents, count.chunks]));
        const total = counts.reduce((sum, count) => sum + count.documents, 0);
        const ready = counts.filter((count) => count.status === 'ready').reduce((sum, count) => sum + count.documents, 0);
        const chunks = counts.reduce((sum, count) => sum + count.chunks, 0);
        if (total > 0) out(`${ready} of ${total} documents indexed (${Math.floor((ready / total) * 100)}%), ${chunks} chunks in the search index`);
        return 0;
      });
    }
    case 'chat ask': {
      const tenantId = flags.tenant;
      const question = positional.join(' ').trim();
      const workspaceId = typeof flags.workspace === 'string' ? flags.workspace : null;
      const conversationId = typeof flags.conversation === 'string' ? flags.conversation : null;
      if (typeof tenantId !== 'string' || !question) return usageError(out, 'chat ask needs --tenant ID and a "question"');
      return withPlatform(async (platform) => {
        await seedPlanCatalogue(platform.commands);
        // Running, not only caught up: the turn waits for the read models to show what it recorded.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        const turn = await askAsOperator(platform.chat, tenantId, { message: question, workspace_id: workspaceId, conversation_id: conversationId }, context);
        out(`conversation ${turn.conversation_id}`);
        if (!turn.answer) {
          out('a person has taken this conversation over: the assistant does not answer');
          return 0;
        }
        out('');
        out(turn.answer.text);
        out('');
        out(`model: ${turn.answer.model}; ${turn.answer.answered_from_knowledge ? 'answered from the knowledge base' : 'nothing relevant in the knowledge base'}`);
        if (turn.answer.citations.length > 0) {
          out('sources:');
          for (const citation of turn.answer.citations) out(`  [${citation.passage_id}] ${citation.title} (document ${citation.document_id}, chunk ${citation.chunk_id})`);
        }
        return 0;
      }, options.platform);
    }
    case 'erase conversation':
    case 'erase lead':
    case 'erase tool-call':
    case 'erase invitation': {
      const [id] = positional;
      const tenantId = flags.tenant;
      if (!id || typeof tenantId !== 'string') return usageError(out, `erase ${action} needs an ID and --tenant ID`);
      return withPlatform(async (platform) => {
        // Running, not only caught up: the erasure waits for the read models to show it.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        const onBehalf = { ...context, tenant_id: tenantId };
        const operator = { kind: 'system' as const, id: OPERATOR_CLI };
        const erased =
          action === 'conversation'
            ? { ...(await eraseConversationOf(platform.identity, tenantId, id, onBehalf)), conversation_id: null }
            : action === 'lead'
              ? await eraseLeadOf(platform.identity, tenantId, id, operator, onBehalf)
              : action === 'invitation'
                ? { ...(await eraseInvitationOf(platform.identity, tenantId, id, operator, onBehalf)), conversation_id: null }
                : { ...(await eraseToolCallOf(platform.identity, tenantId, id, operator, onBehalf)), conversation_id: null };
        out(`erased ${action} ${erased.id} (first erased at ${erased.erased_at})${erased.conversation_id === null ? '' : `, with the conversation it was left in, ${erased.conversation_id}`}`);
        return 0;
      }, options.platform);
    }
    case 'erase end-user': {
      const tenantId = flags.tenant;
      const userId = flags['verified-user-id'];
      const number = flags['whatsapp-number'];
      if (typeof tenantId !== 'string' || (typeof userId === 'string') === (typeof number === 'string')) {
        return usageError(out, 'erase end-user needs --tenant ID and one of --verified-user-id ID or --whatsapp-number NUMBER');
      }
      return withPlatform(async (platform) => {
        // Running, not only caught up: each erasure waits for the read models to show it.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        const endUser = typeof userId === 'string' ? { verified_user_id: userId } : { whatsapp_number: number as string };
        const erased = await eraseEndUserOf(platform.identity, tenantId, endUser, { kind: 'system', id: OPERATOR_CLI }, { ...context, tenant_id: tenantId });
        out(`erased ${erased.conversations.length} conversation(s), ${erased.leads.length} lead(s), ${erased.whatsapp_messages} WhatsApp message(s) that were no conversation's turn`);
        for (const id of erased.conversations) out(`  conversation ${id}`);
        for (const id of erased.leads) out(`  lead ${id}`);
        return 0;
      }, options.platform);
    }
    case 'erase orchestration-payloads': {
      const tenantId = flags.tenant;
      const before = flags.before;
      if (typeof tenantId !== 'string' || typeof before !== 'string') return usageError(out, 'erase orchestration-payloads needs --tenant ID and --before YYYY-MM-DD');
      return withPlatform(async (platform) => {
        // Running, not only caught up: each day's erasure waits for the read model to show it.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        const erased = await erasePayloadsOf(platform.identity, tenantId, { before }, { ...context, tenant_id: tenantId });
        out(erased.erased_days.length === 0 ? `no payloads of ${tenantId} received before ${before} were left to erase` : `erased the payloads of ${erased.erased_days.length} day(s): ${erased.erased_days.join(', ')}`);
        return 0;
      }, options.platform);
    }
    case 'events orchestration':
      return orchestrationEvents(positional, flags, out, context);
    case 'connections list': {
      const tenantId = flags.tenant;
      if (typeof tenantId !== 'string') return usageError(out, 'connections list needs --tenant ID');
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        const rows: Array<Array<string | number>> = [];
        let cursor: string | undefined;
        do {
          const page = await listSdkConnections(platform, { tenant_id: tenantId }, { limit: 100, ...(cursor === undefined ? {} : { cursor }) });
          for (const connection of page.items) {
            const { last_sync: synced, last_sync_failure: failed } = connection;
            // The later of the last success and the last failure.
            const sync = failed !== null && (synced === null || failed.failed_at > synced.synced_at) ? `failed ${failed.failed_at} (${failed.reason})` : (synced?.synced_at ?? 'never');
            rows.push([connection.id, connection.name, connection.enabled ? 'yes' : 'no', connection.status, connection.tools_count, connection.flows_count, connection.schedules_count, sync]);
          }
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        printTable(out, ['id', 'name', 'enabled', 'status', 'tools', 'flows', 'schedules', 'last_sync'], rows);
        return 0;
      });
    }
    case 'connections schedules': {
      const [id] = positional;
      const tenantId = flags.tenant;
      if (!id || typeof tenantId !== 'string') return usageError(out, 'connections schedules needs a connection ID and --tenant ID');
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        const limits = { maxPayloadBytes: platform.config.orchestration.maxPayloadBytes, secretGraceSeconds: platform.config.sdkSecretGraceSeconds };
        const schedules = (await listSdkConnectionSchedules({ ...platform, sdkConnections: limits }, { tenant_id: tenantId }, id)).items;
        printTable(
          out,
          ['id', 'cron', 'timezone', 'event', 'next_run_at', 'problem'],
          schedules.map((schedule) => ('cron' in schedule ? [schedule.id, schedule.cron, schedule.timezone, schedule.event, schedule.next_run_at ?? '-', schedule.problem ?? '-'] : [schedule.id ?? '-', '-', '-', '-', '-', schedule.problem])),
        );
        return 0;
      });
    }
    case 'sagas failures':
      return withPlatform(async (platform) => {
        const failures = await platform.sagaDelivery.listFailures();
        printTable(out, ['group', 'event_id', 'type', 'attempts', 'status', 'next_attempt_at', 'last_error'], failures.map((f) => [f.group, f.event_id, f.event_type, f.attempts, f.status, f.next_attempt_at ?? '', f.last_error]));
        return 0;
      });
    case 'keys public': {
      const config = loadConfig(process.env);
      const key = currentTokenPublicKey(config);
      if (key === null) {
        out(`no token key yet: TOKEN_SECRET_KEY is unset and ${config.dataDir} holds no ${KEYS_FILE}`);
        return 1;
      }
      out(key);
      return 0;
    }
    case 'keys generate': {
      const key = generateTokenKey();
      out(`TOKEN_SECRET_KEY=${key.secret}`);
      out(`# its public half, for TOKEN_PREVIOUS_PUBLIC_KEYS once it is rotated in turn: ${key.public}`);
      return 0;
    }
    case 'connector doctor':
      return runConnectorDoctor(rest, out);
    default:
      out(USAGE);
      return area === undefined || area === 'help' || flags.help ? 0 : 2;
  }
}

/** `events orchestration list|show|retry|replay`: the routes of spec 4.13, the operator (the system actor) acting. */
async function orchestrationEvents(positional: string[], flags: Record<string, string | true>, out: Output, context: ReturnType<typeof systemContext>): Promise<number> {
  const [command, eventId] = positional;
  const tenantId = flags.tenant;
  if (typeof tenantId !== 'string') return usageError(out, `events orchestration ${command ?? 'list|show|retry|replay|redrive'} needs --tenant ID`);
  switch (command) {
    case 'list': {
      let filter: OrchestrationEventFilter;
      const given = (flag: string): string | undefined => (flags[flag] === true ? '' : (flags[flag] as string | undefined));
      try {
        filter = {
          status: statusFilter(given('status')),
          name: nameFilter(given('name')),
          correlation_id: correlationFilter(given('correlation-id')),
          ...timeRange(given('from'), given('to')),
        };
      } catch (error) {
        if (error instanceof DomainError) return usageError(out, error.message);
        throw error;
      }
      const limit = flags.limit === undefined ? 50 : Number(flags.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) return usageError(out, `--limit must be an integer from 1 to ${LIST_MAX_LIMIT}`);
      const cursor = given('cursor');
      if (cursor === '') return usageError(out, '--cursor needs the cursor a previous page printed');
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        const page = await listOrchestrationEvents(platform, tenantId, filter, { limit, ...(cursor === undefined ? {} : { cursor }) });
        printTable(out, ['id', 'name', 'status', 'attempts', 'received_at'], page.items.map((event) => [event.id, event.name, event.status, event.attempts.length, event.received_at]));
        if (page.next_cursor) out(`more: the same command with --cursor ${page.next_cursor}`);
        return 0;
      });
    }
    case 'show':
      if (!eventId) return usageError(out, 'events orchestration show needs an event ID');
      return withPlatform(async (platform) => {
        await caughtUp(platform);
        printOrchestrationEvent(out, (await getOrchestrationEvent(platform, tenantId, eventId)).value);
        return 0;
      });
    case 'retry':
    case 'replay': {
      if (!eventId) return usageError(out, `events orchestration ${command} needs an event ID`);
      const reason = typeof flags.reason === 'string' ? flags.reason : null;
      return withPlatform(async (platform) => {
        // Running, not only caught up: the command waits for the read models to show what it recorded.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        if (command === 'retry') {
          const event = (await retryOrchestrationEventAsOperator(platform.orchestration, tenantId, eventId, context)).value;
          out(`re-queued ${event.id} (${event.name}): ${event.status}; a running dispatcher takes it next`);
        } else {
          const replay = (await replayOrchestrationEventAsOperator(platform.orchestration, tenantId, eventId, { reason }, context)).value;
          out(`replayed ${eventId} as ${replay.id} (${replay.status})`);
        }
        return 0;
      });
    }
    case 'redrive': {
      const given = (flag: string): string | undefined => (typeof flags[flag] === 'string' ? (flags[flag] as string) : undefined);
      const input = { status: given('status'), name: given('name'), from: given('from'), to: given('to') };
      return withPlatform(async (platform) => {
        // Running: each page waits for the read models to show what it re-queued.
        await platform.projections.start();
        await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 30_000 });
        let cursor: string | null = null;
        let requeued = 0;
        let skipped = 0;
        do {
          let page;
          try {
            page = await redriveOrchestrationEvents(platform.orchestration, tenantId, { ...input, ...(cursor === null ? {} : { cursor }) }, { ...context, tenant_id: tenantId });
          } catch (error) {
            if (error instanceof DomainError && error.kind === 'invalid') return usageError(out, error.message);
            throw error;
          }
          for (const id of page.requeued) out(`re-queued ${id}`);
          for (const { id, code } of page.skipped) out(`skipped ${id}: ${code}`);
          requeued += page.requeued.length;
          skipped += page.skipped.length;
          cursor = page.next_cursor;
        } while (cursor !== null);
        out(`${requeued} re-queued, ${skipped} skipped; a running dispatcher takes them next`);
        return 0;
      });
    }
    default:
      return usageError(out, 'events orchestration needs list, show, retry, replay or redrive');
  }
}

function printOrchestrationEvent(out: Output, event: OrchestrationEventView): void {
  const shown = (value: unknown): string => (value === null || value === undefined ? '-' : String(value));
  out(`event ${event.id}  ${event.name}  ${event.status}`);
  out(`  source: ${shown(event.source)}  version: ${event.version}  received: ${event.received_at} via ${event.received_via}`);
  out(`  correlation_id: ${event.correlation_id}  causation_id: ${shown(event.causation_id)}  depth: ${event.depth}`);
  out(`  idempotency_key: ${shown(event.idempotency_key)}  sequence: ${event.sequence_key === null ? '-' : `${event.sequence_key} #${event.sequence_n}`}`);
  out(`  not_before: ${event.not_before}  expires_at: ${shown(event.expires_at)}  next_attempt_at: ${shown(event.next_attempt_at)}  settled_at: ${shown(event.settled_at)}`);
  if (event.sequence_gap) out(`  sequence_gap: ${JSON.stringify(event.sequence_gap)}`);
  out(`  payload: ${JSON.stringify(event.payload)}`);
  out(`  replay_of: ${shown(event.replay_of)}`);
  out(`  replays: ${event.replays.length === 0 ? '-' : event.replays.join(', ')}`);
  out(`attempts: ${event.attempts.length === 0 ? '-' : event.attempts.length}`);
  for (const attempt of event.attempts) {
    const error = attempt.error ? `  error ${attempt.error.code}: ${attempt.error.message}` : '';
    out(`  #${attempt.attempt} ${attempt.outcome}  started ${attempt.started_at}  ended ${shown(attempt.ended_at)}${error}`);
    if (attempt.flow_runs.length === 0) out('    no flow matched');
    for (const run of attempt.flow_runs) {
      out(`    flow ${run.flow}`);
      for (const step of run.steps) {
        const detail = step.error ? `error ${step.error.code}: ${step.error.message}` : `output ${JSON.stringify(step.output)}`;
        out(`      step ${step.step} ${step.outcome}  request_id ${step.request_id}  ${detail}`);
      }
    }
  }
  for (const requeue of event.requeues) out(`requeued from ${requeue.previous_status} at ${requeue.requeued_at} by ${requeue.by.kind} ${requeue.by.id}`);
}

/** `backup DEST`: opens no platform (a backup reads the files, and must not wait for leases or projections). */
async function backup(words: string[], out: Output): Promise<number> {
  const [destination, ...more] = words;
  if (!destination || more.length > 0) return usageError(out, 'backup needs one DEST folder (a new or empty one)');
  const report = await backUpEmbeddedStore(loadConfig(process.env), destination);
  out(`backed up to ${report.destination}: events up to position ${report.eventHead}`);
  const blobs = report.blobs.files > 0 ? [['blobs/', report.blobs.bytes, `${report.blobs.files} files`]] : [];
  printTable(out, ['file', 'bytes', 'sha256'], [...report.files.map((file) => [file.path, file.bytes, file.sha256]), ...blobs]);
  for (const note of report.notes) out(`note: ${note}`);
  out(`restore: verify-backup ${report.destination}, stop every platform process, and start with DATA_DIR set to a copy of this folder (README, "Backups")`);
  return 0;
}

/** `verify-backup DIR`: 0 when every file is as recorded, 1 naming what is not. */
async function verifyBackupFolder(words: string[], out: Output): Promise<number> {
  const [folder, ...more] = words;
  if (!folder || more.length > 0) return usageError(out, 'verify-backup needs one backup folder DIR');
  const { checked, problems } = await verifyEmbeddedBackup(folder);
  for (const line of checked) out(`ok: ${line}`);
  for (const problem of problems) out(`problem: ${problem}`);
  out(problems.length === 0 ? `${folder} is whole` : `${folder} is not whole: ${problems.length} problem(s)`);
  return problems.length === 0 ? 0 : 1;
}

function usageError(out: Output, message: string): number {
  out(`error: ${message}`);
  return 2;
}

if (require.main === module) {
  // `events tail | head`: when the reader goes away, end quietly as Unix tools do.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  runCli(process.argv.slice(2), (line) => process.stdout.write(`${line}\n`))
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      if (error instanceof ConfigError || error instanceof DataFolderError || error instanceof BackupError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(2);
      }
      const code = (error as { code?: string }).code;
      process.stderr.write(`error: ${code ? `${code}: ` : ''}${messageOf(error)}\n`);
      process.exit(1);
    });
}
