// The real platform and Koa server on an ephemeral port, embedded stores in a temp folder.

import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../infrastructure/config/config';
import { type Platform, type PlatformOverrides, createPlatform } from '../../infrastructure/composition-root';
import { silentLogger } from '../../application/ports/logger';
import { parseStreamName } from '../../domain/shared/stream-names';
import { temporaryDirectory } from './files';

export interface TestServer {
  platform: Platform;
  url: string;
  request(method: string, path: string, options?: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> }): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The events this request appended (tagged with its request id), oldest first, as `Type@stream`. */
  events(): Promise<string[]>;
}

/** Events carry the request id the server answered with, so a test can see exactly what a request wrote. */
async function eventsOfRequest(platform: Platform, requestId: string | null): Promise<string[]> {
  if (!requestId) return [];
  const recent = await platform.storedEvents.readAll({ direction: 'backwards', maxCount: 2000 });
  return recent
    .filter((event) => event.metadata.request_id === requestId)
    .reverse()
    .map((event) => `${event.type}@${parseStreamName(event.stream).category}`);
}

export async function startTestServer(env: Record<string, string> = {}, overrides: PlatformOverrides = {}): Promise<TestServer> {
  const dir = temporaryDirectory();
  // Suites register many accounts from 127.0.0.1; tests/api/rate-limits.test.ts sets tight limits.
  const config = loadConfig({
    DATA_DIR: dir.path,
    SQLITE_SYNCHRONOUS: 'normal',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    RATE_LIMIT_PER_IP: '100000',
    RATE_LIMIT_PER_EMAIL: '1000',
    ...env,
  });
  const platform = await createPlatform(config, { logger: silentLogger, ...overrides });
  await platform.start();
  const server = await platform.httpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    platform,
    url,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | Buffer | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, { method, headers, body });
      const text = await response.text();
      let json: unknown = undefined;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const requestId = response.headers.get('x-request-id');
      return { status: response.status, headers: response.headers, text, json, events: () => eventsOfRequest(platform, requestId) };
    },
    async close() {
      // Upgraded sockets (/ws/chat) are not the server's to close: they would keep it open.
      await platform.closeWidgetSockets();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await platform.close();
      dir.remove();
    },
  };
}
