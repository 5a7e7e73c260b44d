// Schedules advertised by an SDK connection (docs/orchestration-events.md, "Schedules"): a sync
// stores them, `GET .../schedules` lists them as the platform reads them, and the scheduler
// emits each occurrence once (its idempotency key), whichever process finds it due, as a root
// event that runs the flows its name triggers (none for a suspended organization), counted on
// /metrics. Time is a ManualClock; the test runs `scheduler.runOnce()` itself (the background
// scheduler is off).

import { expect } from 'chai';
import { createConnector } from '../../adapters/connector-sdk';
import { OrchestrationScheduler } from '../../application/orchestration/schedules';
import { type Logger, silentLogger } from '../../application/ports/logger';
import type { ReadStore } from '../../application/ports/read-store';
import { suspendTenant, unsuspendTenant } from '../../application/tenant/tenant-commands';
import { userContext } from '../support/context';
import { type Account, joinAs, liftSeatLimit, registerOwner } from '../support/identity';
import { signedConnectorClient } from '../support/orchestration';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

const SECRET = 'ssec_schedules-test-secret-0123456789abcdef';

describe('orchestration schedules advertised by SDK connections', () => {
  const clock = new ManualClock(new Date('2026-12-01T10:04:30.000Z'));
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let connectionId: string;
  const stockSyncs: Array<{ scheduled_for: unknown; request_id: string }> = [];
  const closers: Array<() => Promise<void>> = [];

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const send = (method: string, path: string, body?: unknown, account = owner): Promise<TestResponse> => server.request(method, path, { headers: as(account), body });
  const scheduledEvents = async (): Promise<Array<Record<string, any>>> => {
    const listed = await send('GET', '/api/v1/org/events?name=shop.stock.sync_due&limit=100');
    expect(listed.status, listed.text).to.equal(200);
    return listed.json.items;
  };

  before(async () => {
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS: '600', METRICS_PUBLIC: 'true' },
      { clock, connectorClient: signedConnectorClient(), orchestrationScheduler: false },
    );
    owner = await registerOwner(server, 'schedules-org');
    await subscribeTo(server, owner.tenant_id, 'premium');
    await liftSeatLimit(server, owner.tenant_id);
    member = await joinAs(server, await registerOwner(server, 'schedules-member-home'), owner.tenant_id, 'member');

    const connector = createConnector({ signingSecrets: [SECRET] })
      .tool('sync_stock', {
        description: 'Sync the stock from the warehouse',
        chat: false,
        input_schema: { type: 'object', properties: { scheduled_for: { type: 'string' }, full: { type: 'boolean' } } },
        handler: ({ parameters, request_id }) => {
          stockSyncs.push({ scheduled_for: parameters.scheduled_for, request_id });
          return { output: { synced: true } };
        },
      })
      .advertise({
        flows: [{ id: 'stock_sync', trigger: 'shop.stock.sync_due', steps: [{ tool: 'sync_stock', parameters: { scheduled_for: '$.payload.scheduled_for', full: '$.payload.full' } }] }],
        schedules: [
          { id: 'hourly_stock', cron: '0 * * * *', timezone: 'Europe/Paris', event: 'shop.stock.sync_due', payload: { full: false }, label: 'Hourly stock sync' },
          { id: 'broken_cron', cron: '61 * * * *', event: 'shop.stock.sync_due' },
          { id: 'no_such_zone', cron: '0 * * * *', timezone: 'Mars/Olympus', event: 'shop.stock.sync_due' },
          { id: 'bad_name', cron: '0 * * * *', event: 'Stock.Sync' },
          { id: 'hourly_stock', cron: '30 * * * *', event: 'shop.stock.sync_due' },
        ],
      });
    const listening = await connector.listen(0, '127.0.0.1');
    closers.push(() => listening.close());
    const created = await send('POST', '/api/v1/org/sdk-connections', { name: 'Warehouse', webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: SECRET, enabled: true });
    expect(created.status, created.text).to.equal(201);
    connectionId = created.json.id;
    const synced = await send('POST', `/api/v1/org/sdk-connections/${connectionId}/sync-tools`, {});
    expect(synced.status, synced.text).to.equal(200);
    expect(synced.json.schedules_count).to.equal(5);
  });

  /** Another process's scheduler, just started: its first look reaches back over the catch-up window. */
  const startingScheduler = () => new OrchestrationScheduler({ ...server.platform.orchestration, logger: silentLogger }, { tickMs: 5000, catchUpSeconds: 600 });

  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('lists the schedules as the platform reads them: the next run of each that runs, and why the others do not', async () => {
    const listed = await send('GET', `/api/v1/org/sdk-connections/${connectionId}/schedules`);
    expect(listed.status, listed.text).to.equal(200);
    const [hourly, broken, zone, name, taken] = listed.json.items;
    expect(hourly).to.deep.equal({
      id: 'hourly_stock',
      label: 'Hourly stock sync',
      cron: '0 * * * *',
      timezone: 'Europe/Paris',
      event: 'shop.stock.sync_due',
      payload: { full: false },
      next_run_at: '2026-12-01T11:00:00.000Z',
      problem: null,
    });
    expect(broken).to.include({ id: 'broken_cron' });
    expect(broken.problem).to.match(/^cron: .*minute/);
    expect(zone.problem).to.match(/^timezone/);
    expect(name.problem).to.match(/^event must be an event name/);
    expect(taken).to.include({ id: 'hourly_stock', problem: 'id is taken by an earlier schedule of this connection' });
    expect(taken.advertised).to.deep.equal({ id: 'hourly_stock', cron: '30 * * * *', event: 'shop.stock.sync_due' });
    expect(listed.json.next_cursor).to.equal(null);
    const connection = await send('GET', `/api/v1/org/sdk-connections/${connectionId}`);
    expect(connection.json.schedules_count).to.equal(5);
  });

  it('refuses the listing without a token (401), to a member (403) and for a connection that is not the organization\'s (404)', async () => {
    const path = `/api/v1/org/sdk-connections/${connectionId}/schedules`;
    expect((await server.request('GET', path)).status).to.equal(401);
    const forbidden = await send('GET', path, undefined, member);
    expect(forbidden.status).to.equal(403);
    expect(forbidden.json.code).to.equal('insufficient_role');
    const other = await registerOwner(server, 'schedules-other-org');
    const missing = await send('GET', path, undefined, other);
    expect(missing.status).to.equal(404);
    expect(missing.json.code).to.equal('sdk_connection_not_found');
  });

  it('emits nothing for an occurrence before the sync that brought the schedule, and nothing before the next one is due', async () => {
    // The catch-up window reaches back to 09:54:30 and holds 10:00, but the sync (10:04:30) came after it.
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);
    clock.advance(20_000);
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);
    expect(await scheduledEvents()).to.deep.equal([]);
  });

  it('emits an occurrence once, as a root event that runs the flow, whichever process finds it due and however often', async () => {
    clock.advance(55 * 60_000 + 15_000); // 11:00:05
    const [emitted, ...more] = await server.platform.scheduler.runOnce();
    expect(more).to.deep.equal([]);
    expect(emitted).to.deep.include({ tenant_id: owner.tenant_id, connection_id: connectionId, schedule_id: 'hourly_stock', occurrence: '2026-12-01T11:00:00.000Z', created: true });
    // Another process's scheduler (its first look reaches back over the catch-up window) finds the same occurrence: the same event, nothing new.
    const [again] = await startingScheduler().runOnce();
    expect(again).to.deep.include({ event_id: emitted.event_id, created: false });
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);

    await server.platform.dispatcher.drain();
    const [event] = await scheduledEvents();
    expect(event).to.deep.include({
      id: emitted.event_id,
      name: 'shop.stock.sync_due',
      source: `schedule:hourly_stock@${connectionId}`,
      received_via: 'schedule',
      causation_id: null,
      idempotency_key: `schedule:${connectionId}:hourly_stock:2026-12-01T11:00:00.000Z`,
      status: 'processed',
    });
    expect(event.payload).to.deep.equal({ full: false, scheduled_for: '2026-12-01T11:00:00.000Z' });
    expect(stockSyncs.map((sync) => sync.scheduled_for)).to.deep.equal(['2026-12-01T11:00:00.000Z']);
    const shown = await send('GET', `/api/v1/org/events/${emitted.event_id}`);
    expect(shown.json.attempts[0].flows).to.deep.equal([`stock_sync@${connectionId}`]);
  });

  it('runs the latest occurrence only after a stall, and none while the connection is disabled', async () => {
    clock.advance(2 * 3600_000); // 13:00:05: 12:00 and 13:00 fell since the last look
    const emitted = await server.platform.scheduler.runOnce();
    expect(emitted.map((run) => run.occurrence)).to.deep.equal(['2026-12-01T13:00:00.000Z']);

    const disabled = await send('PATCH', `/api/v1/org/sdk-connections/${connectionId}`, { enabled: false });
    expect(disabled.status, disabled.text).to.equal(200);
    const listed = await send('GET', `/api/v1/org/sdk-connections/${connectionId}/schedules`);
    expect(listed.json.items[0].next_run_at).to.equal(null);
    clock.advance(3600_000); // 14:00:05
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);

    // Enabled again: the next occurrence runs, not the one missed while it was disabled, not
    // even by a process starting now, whose first look reaches back over 14:00.
    const enabled = await send('PATCH', `/api/v1/org/sdk-connections/${connectionId}`, { enabled: true });
    expect(enabled.status, enabled.text).to.equal(200);
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);
    expect(await startingScheduler().runOnce()).to.deep.equal([]);
    clock.advance(3600_000); // 15:00:05
    expect((await server.platform.scheduler.runOnce()).map((run) => run.occurrence)).to.deep.equal(['2026-12-01T15:00:00.000Z']);
    expect((await scheduledEvents()).map((event) => event.payload.scheduled_for).sort()).to.deep.equal([
      '2026-12-01T11:00:00.000Z',
      '2026-12-01T13:00:00.000Z',
      '2026-12-01T15:00:00.000Z',
    ]);
  });

  it('keeps a schedule\'s start across a sync that advertises it unchanged: a sync just after an occurrence does not lose it', async () => {
    clock.advance(3600_000 - 4_000); // 16:00:01, the 16:00 occurrence not yet looked for
    const synced = await send('POST', `/api/v1/org/sdk-connections/${connectionId}/sync-tools`, {});
    expect(synced.status, synced.text).to.equal(200);
    expect((await server.platform.scheduler.runOnce()).map((run) => run.occurrence)).to.deep.equal(['2026-12-01T16:00:00.000Z']);
  });

  it('runs no schedule of a suspended organization, and does not make up its occurrences once it is unsuspended', async () => {
    const cli = userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: owner.tenant_id });
    await server.platform.readYourWrites((await suspendTenant(server.platform.commands, owner.tenant_id, 'unpaid invoices', cli)).position);
    clock.advance(3600_000 + 4_000); // 17:00:05
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);
    await server.platform.readYourWrites((await unsuspendTenant(server.platform.commands, owner.tenant_id, cli)).position);
    expect(await server.platform.scheduler.runOnce()).to.deep.equal([]);
    clock.advance(3600_000); // 18:00:05
    expect((await server.platform.scheduler.runOnce()).map((run) => run.occurrence)).to.deep.equal(['2026-12-01T18:00:00.000Z']);
  });

  it('reports its occurrences by outcome and when it last looked on /metrics', async () => {
    const scraped = await server.request('GET', '/metrics');
    expect(scraped.status).to.equal(200);
    expect(scraped.text).to.include('orchestration_schedule_occurrences_total{outcome="emitted"} 5');
    const lastLook = /^orchestration_schedule_last_look_seconds (\S+)$/m.exec(scraped.text);
    expect(Number(lastLook?.[1])).to.equal(new Date('2026-12-01T18:00:05.000Z').getTime() / 1000);
  });

  it('waits while an upgrade\'s rebuild serves the read model without schedules, then emits what came due meanwhile', async () => {
    // A process of this release started on a store whose sdk_connections is still served at version 1.
    const readStore = server.platform.orchestration.readStore;
    let servedVersion = 1;
    const collectionsRead: string[] = [];
    const upgrading: ReadStore = new Proxy(readStore, {
      get(target, property) {
        if (property === 'getProjectionState') {
          return async (name: string) => {
            const state = await target.getProjectionState(name);
            return name === 'sdk_connections' && state ? { ...state, version: servedVersion } : state;
          };
        }
        if (property === 'collection') {
          return (name: string) => {
            collectionsRead.push(name);
            return target.collection(name);
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const logged: Array<{ fields: object; message?: string }> = [];
    const logger: Logger = { ...silentLogger, info: (fields, message) => void logged.push({ fields, message }) };
    const scheduler = new OrchestrationScheduler({ ...server.platform.orchestration, readStore: upgrading, logger }, { tickMs: 5000, catchUpSeconds: 3600 });

    clock.advance(3600_000); // 19:00:05
    expect(await scheduler.runOnce()).to.deep.equal([]);
    expect(await scheduler.runOnce()).to.deep.equal([]);
    expect(collectionsRead).to.deep.equal([]);
    expect(logged.map((line) => line.message)).to.deep.equal(['orchestration scheduler: waiting for the rebuilt read model with schedules']);

    servedVersion = 2; // the rebuild swapped in
    clock.advance(20 * 60_000); // 19:20:05
    const emitted = await scheduler.runOnce();
    expect(emitted.map((run) => [run.occurrence, run.created])).to.deep.equal([['2026-12-01T19:00:00.000Z', true]]);
    expect(collectionsRead).to.include('sdk_connections');
  });
});
