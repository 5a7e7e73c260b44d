// The platform's node:http server keeps an idle connection open HTTP_KEEP_ALIVE_TIMEOUT_MS
// (behind a load balancer, longer than the balancer's own idle timeout, or it answers 502 for
// requests sent on a connection the server is closing), and waits for a request's headers a
// minute, and always longer than that.

import { expect } from 'chai';
import { silentLogger } from '../../application/ports/logger';
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, createHttpServer } from '../../adapters/http/http-server';
import { createPlatform, loadConfig } from '../../infrastructure/composition-root';
import { temporaryDirectory } from '../support/files';

describe('the platform’s HTTP server timeouts (HTTP_KEEP_ALIVE_TIMEOUT_MS)', () => {
  const app = { callback: () => async () => undefined };

  it('keeps Node’s five seconds by default, the headers’ minute above it', () => {
    const server = createHttpServer(app);
    expect([server.keepAliveTimeout, server.headersTimeout]).to.deep.equal([DEFAULT_KEEP_ALIVE_TIMEOUT_MS, 60_000]);
  });

  it('outlasts a load balancer’s idle timeout when told, the headers’ wait a second longer still', async () => {
    const dir = temporaryDirectory();
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main', HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' }), { logger: silentLogger });
    try {
      const server = await platform.httpServer();
      expect([server.keepAliveTimeout, server.headersTimeout]).to.deep.equal([65_000, 66_000]);
    } finally {
      await platform.close();
      dir.remove();
    }
  });

  it('refuses a value outside one second to an hour, naming the variable', () => {
    for (const value of ['999', '3600001', 'soon']) expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: value })).to.throw(/HTTP_KEEP_ALIVE_TIMEOUT_MS/);
  });
});
