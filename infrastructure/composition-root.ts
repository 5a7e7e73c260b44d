import type http from 'node:http';
// The composition root: wires one process from the config. With no EVENTSTORE_URL /
// MONGODB_URL everything is embedded in one SQLite file under DATA_DIR; each URL swaps in
// the real engine and nothing else changes.

import path from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import type { CommandDependencies } from '../application/command-handling/handle-command';
import { checkReadiness } from '../application/operations/readiness';
import type { Clock, IdGenerator } from '../application/ports/clock';
import type { EventStore } from '../application/ports/event-store';
import type { Logger } from '../application/ports/logger';
import type { ReadStore } from '../application/ports/read-store';
import type { SagaDelivery } from '../application/ports/saga-delivery';
import { CheckpointedSagaDelivery } from '../application/sagas/checkpointed-delivery';
import { allSagas } from '../application/sagas/index';
import type { Saga } from '../application/sagas/saga';
import { SagaRunner } from '../application/sagas/saga-runner';
import { graphqlRouter } from '../adapters/http/graphql';
import { meSessionsRouter } from '../adapters/http/me/sessions';
import { adminRouter } from '../adapters/http/admin/index';
import { orgAuditLogsRouter } from '../adapters/http/org/audit-logs';
import { orgRouter } from '../adapters/http/org/index';
import { teamRouter } from '../adapters/http/team/index';
import { publicRouter } from '../adapters/http/public';
import { operationsRouter } from '../adapters/http/operations';
import { bootstrapSuperAdmin } from '../application/admin/admin-auth';
import type { IdentityDependencies } from '../application/identity/identity';
import { mailDeliverySaga } from '../application/mail/outbox';
import { teamMembershipCleanupSaga } from '../application/organization/team-cleanup-saga';
import type { Secrets } from '../application/ports/identity';
import type { Mailer } from '../application/ports/mailer';
import { createHttpServer } from '../adapters/http/http-server';
import { createHttpApp } from '../adapters/http/server';
import { allProjections } from '../projections/index';
import type { Projection } from '../projections/projection';
import { ProjectionRunner } from '../projections/runner';
import type { Config } from './config/config';
import { EventStoreDbSagaDelivery } from './event-store/eventstoredb-saga-delivery';
import { EventStoreDbEventStore, connectEventStoreDb } from './event-store/eventstoredb';
import { SqliteEventStore } from './event-store/sqlite';
import { loadKeys } from './crypto/keys';
import { ScryptPasswordHasher } from './crypto/passwords';
import { AesGcmSecrets } from './crypto/secrets';
import { PasetoTokenService } from './crypto/tokens';
import { createLogger } from './logging/logger';
import { LogMailer } from './mail/log-mailer';
import { SmtpMailer } from './mail/smtp-mailer';
import { MongoRateLimiter } from './rate-limit/mongodb';
import { TokenBucketRateLimiter } from './rate-limit/token-bucket';
import { InstrumentedEventStore, PlatformMetrics } from './metrics/metrics';
import { MongoReadStore, connectMongoReadStore } from './read-store/mongodb';
import { SqliteReadStore } from './read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from './sqlite/database';
import { systemClock, uuidGenerator } from './system';

export interface Platform {
  config: Config;
  logger: Logger;
  clock: Clock;
  ids: IdGenerator;
  eventStore: EventStore;
  readStore: ReadStore;
  commands: CommandDependencies;
  identity: IdentityDependencies;
  secrets: Secrets;
  mailer: Mailer;
  projections: ProjectionRunner;
  sagaDelivery: SagaDelivery;
  sagas: SagaRunner;
  metrics: PlatformMetrics;
  /**
   * Read-your-writes: waits, at most READ_YOUR_WRITES_TIMEOUT_MS, until the named projections
   * (default all) have passed the position a write returned. False on timeout.
   */
  readYourWrites(position: number | null, projections?: readonly string[]): Promise<boolean>;
  /** Starts projections and sagas. */
  start(): Promise<void>;
  /** The HTTP application over this platform. */
  httpApp(): Koa;
  /** The routers `httpApp()` serves, for tests that take inventory of the routes. */
  httpRouters(): Router[];
  /** A node:http server for `httpApp()`, finishing responses together at the end of each event-loop turn. */
  httpServer(): http.Server;
  /** Stops sagas and projections (their checkpoints are committed per batch) and closes the stores. */
  close(): Promise<void>;
}

export interface PlatformOverrides {
  logger?: Logger;
  clock?: Clock;
  projections?: readonly Projection[];
  sagas?: readonly Saga[];
  /** For tests: tighter polling. */
  sagaRetryPollMs?: number;
  mailer?: Mailer;
}

export const SQLITE_FILE = 'platform.db';

export async function createPlatform(config: Config, overrides: PlatformOverrides = {}): Promise<Platform> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  let sqlite: SqliteDatabase | null = null;
  const openSqlite = (): SqliteDatabase => (sqlite ??= openSqliteDatabase(path.join(config.dataDir, SQLITE_FILE), { synchronous: config.sqliteSynchronous }));

  const rawEventStore: EventStore = config.eventStoreUrl ? connectEventStoreDb(config.eventStoreUrl) : new SqliteEventStore(openSqlite(), { now: () => clock.now() });
  const readStore: ReadStore = config.mongoDbUrl ? await connectMongoReadStore(config.mongoDbUrl) : new SqliteReadStore(openSqlite(), { cacheTtlMs: config.readCacheTtlMs });

  let projections: ProjectionRunner | null = null;
  const metrics = new PlatformMetrics(() => (projections ? projections.status() : Promise.resolve([])));
  const eventStore = new InstrumentedEventStore(rawEventStore, metrics);
  projections = new ProjectionRunner({ eventStore, readStore, clock, logger: logger.child({ component: 'projections' }) }, overrides.projections ?? allProjections);
  const runner = projections;

  const commands: CommandDependencies = { eventStore, clock, ids: uuidGenerator };
  const keys = loadKeys({ dataDir: config.dataDir, tokenSecretKey: config.tokenSecretKey, dataEncryptionKey: config.dataEncryptionKey });
  const secrets = new AesGcmSecrets(keys.dataKey);
  const mailer =
    overrides.mailer ?? (config.smtpUrl ? new SmtpMailer(config.smtpUrl, config.smtpFrom) : new LogMailer(logger.child({ component: 'mail' }), config.nodeEnv === 'development'));
  const readYourWrites = (position: number | null, names?: readonly string[]): Promise<boolean> =>
    runner.waitFor(position, { timeoutMs: config.readYourWritesTimeoutMs, projections: names });
  const identity: IdentityDependencies = {
    ...commands,
    readStore,
    secrets,
    passwords: new ScryptPasswordHasher(config.scryptLogN),
    tokens: new PasetoTokenService(keys.tokenPrivateKey, keys.tokenPublicKey, clock),
    settings: { tokenTtlSeconds: config.tokenTtlSeconds, otpTtlSeconds: config.otpTtlSeconds, idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds },
    readYourWrites: (position) => readYourWrites(position),
  };
  const platformSagas = overrides.sagas ?? [...allSagas, mailDeliverySaga({ ...commands, secrets, mailer }), teamMembershipCleanupSaga({ ...commands, readStore })];

  const sagaDelivery: SagaDelivery =
    rawEventStore instanceof EventStoreDbEventStore
      ? new EventStoreDbSagaDelivery(rawEventStore.client, readStore)
      : new CheckpointedSagaDelivery({ eventStore, readStore, clock, logger }, { retryPollMs: overrides.sagaRetryPollMs });
  const sagas = new SagaRunner(sagaDelivery, platformSagas, logger.child({ component: 'sagas' }), { maxAttempts: config.sagaMaxAttempts });
  const startedAt = clock.now();

  const operations = (): Router =>
    operationsRouter({
      metrics,
      metricsAuthToken: config.metricsAuthToken,
      metricsPublic: config.metricsPublic,
      startedAt,
      readiness: () => checkReadiness({ eventStore, readStore, projectionStatus: () => runner.status(), maxProjectionLag: config.readyMaxProjectionLag }),
    });

  // With MongoDB, rate limits are shared by every process on the database; embedded, they are per process.
  const limiter = readStore instanceof MongoReadStore ? await MongoRateLimiter.create(readStore.db, clock) : new TokenBucketRateLimiter(clock);
  const graphqlOptions = {
    playground: config.enableGraphqlPlayground,
    limiter,
    limits: {
      perIp: { limit: config.rateLimitPerIp, windowSeconds: config.rateLimitWindowSeconds },
      perEmail: { limit: config.rateLimitPerEmail, windowSeconds: config.rateLimitWindowSeconds },
    },
  };

  let closed = false;
  const httpRouters = (): Router[] => [
    operations(),
    graphqlRouter(identity, graphqlOptions),
    meSessionsRouter(identity),
    orgRouter(identity, [orgAuditLogsRouter(identity)]),
    publicRouter(identity),
    teamRouter(identity),
    adminRouter(identity, graphqlOptions),
  ];
  const httpApp = (): Koa => createHttpApp({ logger, metrics, bodyLimitBytes: config.bodyLimitBytes, routers: httpRouters() });

  return {
    config,
    logger,
    clock,
    ids: uuidGenerator,
    eventStore,
    readStore,
    commands,
    identity,
    secrets,
    mailer,
    projections: runner,
    sagaDelivery,
    sagas,
    metrics,
    readYourWrites,
    async start() {
      await runner.start();
      await sagas.start();
      if (config.superAdminEmail && config.superAdminPassword) await bootstrapSuperAdmin(identity, config.superAdminEmail, config.superAdminPassword);
    },
    httpApp,
    httpRouters,
    httpServer: () => createHttpServer(httpApp()),
    async close() {
      if (closed) return;
      closed = true;
      await sagas.stop();
      await runner.stop();
      await eventStore.close();
      await readStore.close();
      if (mailer instanceof SmtpMailer) mailer.close();
      (sqlite as SqliteDatabase | null)?.close();
    },
  };
}

export { ConfigError, loadConfig } from './config/config';
