// The OpenAPI documents kept as test data (tests/fixtures/openapi/), read from the source tree
// whether the tests run from dist/ or not, and a local HTTP server that serves documents the
// way an API's own server would (tests reach it with OUTBOUND_ALLOW_INSECURE and
// OUTBOUND_ALLOW_PRIVATE_NETWORKS).

import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** The folder of the OpenAPI test documents. */
function fixturesFolder(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'tests', 'fixtures', 'openapi');
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error('tests/fixtures/openapi not found above the test files');
}

/** A document of tests/fixtures/openapi/ by file name: petstore-expanded.yaml, petstore.json, catalog-3.1.yaml, swagger-2.0.json, petstore-expanded-v2.yaml. */
export function openApiFixture(name: string): Buffer {
  return fs.readFileSync(path.join(fixturesFolder(), name));
}

export interface DocumentServer {
  url: string;
  /** The paths asked for, in order. */
  requests: string[];
  /** Serves `body` at `path` (200, or the given status and headers). */
  serve(path: string, body: string | Buffer, options?: { status?: number; headers?: Record<string, string> }): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering what `serve` set up, 404 otherwise. */
export async function startDocumentServer(): Promise<DocumentServer> {
  const routes = new Map<string, { body: string | Buffer; status: number; headers: Record<string, string> }>();
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    const route = routes.get(request.url ?? '');
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(route.status, { 'content-type': 'application/octet-stream', ...route.headers }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    serve(routePath, body, options = {}) {
      routes.set(routePath, { body, status: options.status ?? 200, headers: options.headers ?? {} });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
