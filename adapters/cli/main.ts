// The operator CLI: `npm run cli -- <command>`. It opens the same stores as the server
// (DATA_DIR, or EVENTSTORE_URL / MONGODB_URL) and may run beside it: it runs only the
// projections no server holds a lease on (waiting for the others' stored checkpoints), and
// projection commits are compare-and-set on the checkpoint, so a rebuild here and the
// server's runner never interleave.

import 'reflect-metadata';
import { ConfigError, DataFolderError, type Platform, type PlatformOverrides, createPlatform, loadConfig } from '../../infrastructure/composition-root';
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
  sagas failures                     deliveries retrying or dead-lettered
  connector doctor URL --secret S    run the protocol conformance checks against a connector
`;

type Output = (line: string) => void;

async function withPlatform<T>(work: (platform: Platform) => Promise<T>, overrides: PlatformOverrides = {}): Promise<T> {
  const platform = await createPlatform(loadConfig(), { logger: silentLogger, ...overrides });
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
  const context = systemContext(`cli-${Date.now()}`, 'operator-cli');
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
    case 'sagas failures':
      return withPlatform(async (platform) => {
        const failures = await platform.sagaDelivery.listFailures();
        printTable(out, ['group', 'event_id', 'type', 'attempts', 'status', 'next_attempt_at', 'last_error'], failures.map((f) => [f.group, f.event_id, f.event_type, f.attempts, f.status, f.next_attempt_at ?? '', f.last_error]));
        return 0;
      });
    case 'connector doctor':
      return runConnectorDoctor(rest, out);
    default:
      out(USAGE);
      return area === undefined || area === 'help' || flags.help ? 0 : 2;
  }
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
      if (error instanceof ConfigError || error instanceof DataFolderError) {
        process.stderr.write(`${error.message}\n`);
        process.exit(2);
      }
      const code = (error as { code?: string }).code;
      process.stderr.write(`error: ${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
