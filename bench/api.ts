// `npm run bench -- api [--duration 10] [--slices 5] [--connections 50] [--warmup 2]`
//
// Authenticated `GET /api/v1/org/members` on the embedded platform beside a bare Koa route
// (one @koa/router route) doing the same required work (bareMembersApp below) and answering
// the same bytes, in the same run, with the same load generator (autocannon). Both are
// Node's own http server, answering each request as soon as it is ready: the platform
// through `createHttpServer`, as `npm start` serves it. Both servers run in one child
// process so the load generator does not share their event loop. The platform's route does
// the whole path of a real request: request id, access log, metrics, error mapping, routing
// among all its routes, PASETO verification, the session and membership reads, the members
// query. The platform must keep >= 0.5 of the bare route's throughput; the exit code is 1
// when it does not. `npm run bench -- api-inprocess` measures the same two without sockets.

import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import Router from '@koa/router';
import { createHttpServer } from '../adapters/http/http-server';
import { silentLogger } from '../application/ports/logger';
import { handleCommand } from '../application/command-handling/handle-command';
import { membershipAggregate } from '../application/membership/memberships';
import { register } from '../application/registration/register';
import { login } from '../application/session/login';
import { userAggregate } from '../application/user/users';
import { systemContext } from '../application/shared/request-context';
import { membershipStream } from '../domain/membership/membership';
import { userStream } from '../domain/user/user';
import { memberView } from '../application/membership/members';
import { type Platform, createPlatform, loadConfig } from '../infrastructure/composition-root';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../projections/memberships';
import { SESSIONS, type SessionDocument } from '../projections/sessions';
import { answerCpuTimeRequests, cpuPerRequest, forkServers, measureInRotation, printTable, rotationOptions, requestsPerSecond } from './_load';

const REQUIRED_RATIO = 0.5;
const PASSWORD = 'bench password 123';

interface Started {
  platformPort: number;
  barePort: number;
  token: string;
}

export interface ApiBenchServers {
  platform: Platform;
  /** The platform's Koa application, as `platform.httpServer()` serves it. */
  platformApp: Koa;
  /** The reference: a bare Koa route doing the same required work. */
  bareApp: Koa;
  token: string;
  close(): Promise<void>;
}

/** The platform with an organization of three members, the owner's token, and the bare route. */
export async function setUpApiBench(): Promise<ApiBenchServers> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-api-'));
  const platform = await createPlatform(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '12' }), { logger: silentLogger });
  await platform.start();
  const { identity } = platform;
  const context = systemContext('bench');
  const owner = await register(identity, { email: 'owner@bench.test', password: PASSWORD, name: 'Owner', organization_name: 'Bench Org', slug: 'bench-org' }, context);
  // Verified without the emailed code: the bench measures reads, not sign-up.
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'IssueOtp', data: { purpose: 'email_verification', code_hash: 'bench', expires_at: '2999-01-01T00:00:00Z' } }, context);
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'bench' } }, context);
  for (const name of ['second', 'third']) {
    const other = await register(identity, { email: `${name}@bench.test`, password: PASSWORD, name, organization_name: `${name} org`, slug: `${name}-org` }, context);
    const joined = await handleCommand(identity, membershipAggregate, membershipStream(owner.tenant_id), { type: 'AddMember', data: { tenant_id: owner.tenant_id, user_id: other.user_id, role: 'member' } }, context);
    await platform.readYourWrites(joined.position);
  }
  await platform.readYourWrites(await platform.eventStore.headPosition());
  const { token } = await login(identity, 'owner@bench.test', PASSWORD, owner.tenant_id, context);
  return {
    platform,
    platformApp: await platform.httpApp(),
    bareApp: bareMembersApp(platform),
    token,
    close: async () => {
      await platform.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Child process: the platform and the bare route, each on its own node:http server. */
async function serve(): Promise<void> {
  const servers = await setUpApiBench();
  const platformServer = createHttpServer(servers.platformApp);
  const bareServer = http.createServer(servers.bareApp.callback());
  for (const server of [platformServer, bareServer]) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const started: Started = {
    platformPort: (platformServer.address() as { port: number }).port,
    barePort: (bareServer.address() as { port: number }).port,
    token: servers.token,
  };
  const platformMembers = await fetchMembers(started.platformPort, servers.token);
  const bareMembers = await fetchMembers(started.barePort, servers.token);
  if (platformMembers !== bareMembers) throw new Error(`the bare route answers ${bareMembers}, the platform ${platformMembers}`);
  answerCpuTimeRequests();
  process.send?.(started);
  process.once('disconnect', () => {
    platformServer.close();
    bareServer.close();
    void servers.close().finally(() => process.exit(0));
  });
}

/**
 * The reference: one @koa/router route doing what any correct server must do for this
 * request, through the same stores, and nothing more. It verifies the token with the
 * platform's verifier (PASETO, verified tokens remembered, expiry checked on every use),
 * reads the session and the membership through the platform's read store (its read cache
 * included: invalidated by every write, so a revoked session or a disabled member is refused
 * at once), reads the page of members with one query, maps each to its public view and
 * serializes the page. What the platform does beyond this is its own: request id, access
 * log, metrics, error mapping, body handling, nested routing, the query's filters.
 */
function bareMembersApp(platform: Platform): Koa {
  const { tokens, readStore } = platform.identity;
  const sessions = readStore.collection<SessionDocument>(SESSIONS);
  const memberships = readStore.collection<MembershipDocument>(MEMBERSHIPS);
  const app = new Koa();
  const router = new Router();
  router.get('/api/v1/org/members', async (ctx) => {
    const header = ctx.get('authorization');
    const claims = header.startsWith('Bearer ') ? await tokens.verify(header.slice(7), 'tenant') : null;
    if (!claims?.tenant_id) return ctx.throw(401);
    const session = await sessions.get(claims.jti);
    if (session?.status !== 'active') return ctx.throw(401);
    if (session.expires_at !== claims.expires_at && Date.parse(session.expires_at) <= Date.now()) return ctx.throw(401);
    const membership = await memberships.get(membershipId(claims.tenant_id, claims.user_id));
    if (membership?.status !== 'active') return ctx.throw(401);
    const page = await memberships.find({ where: { tenant_id: claims.tenant_id }, sort: { field: 'joined_at', direction: 'asc' } });
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ items: page.items.map(memberView), next_cursor: page.next_cursor });
  });
  app.use(router.routes());
  return app;
}

async function fetchMembers(port: number, token: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/api/v1/org/members`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`GET /api/v1/org/members answered ${response.status}`);
  return response.text();
}

export async function run(args: string[]): Promise<void> {
  if (args.includes('--serve')) return serve();
  const rotation = rotationOptions(args);
  const { duration, slices, connections, warmup } = rotation;
  const servers = await forkServers<Started>('api');
  try {
    const { platformPort, barePort, token } = servers.message;
    console.log(`api bench: ${connections} connections, ${warmup} s warm-up each, then ${duration} s per server in ${slices} rotating slices, Node ${process.version}`);
    const [bare, platform] = await measureInRotation(
      [
        { name: 'bare Koa route, same work', url: `http://127.0.0.1:${barePort}/api/v1/org/members`, method: 'GET', headers: { authorization: `Bearer ${token}` } },
        { name: 'platform GET /api/v1/org/members (authenticated)', url: `http://127.0.0.1:${platformPort}/api/v1/org/members`, method: 'GET', headers: { authorization: `Bearer ${token}` } },
      ],
      rotation,
      servers.cpuTime,
    );
    printTable([bare, platform]);
    const ratio = requestsPerSecond(platform) / requestsPerSecond(bare);
    console.log(`ratio platform / bare: ${ratio.toFixed(2)} (required >= ${REQUIRED_RATIO})`);
    const extra = cpuPerRequest(platform).user - cpuPerRequest(bare).user;
    console.log(`server user CPU the platform adds per request: ${extra.toFixed(1)} µs`);
    if (ratio < REQUIRED_RATIO) process.exitCode = 1;
  } finally {
    servers.stop();
  }
}
