// `npm start`: serves the platform. Stops gracefully on SIGTERM/SIGINT: stop accepting,
// finish in-flight requests and widget chat turns (widget sockets closed 1001), stop projections and sagas (their checkpoints are committed
// with every batch), close the stores.

import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/config';
import { DataFolderError, createPlatform } from './composition-root';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const platform = await createPlatform(config);
  const { logger } = platform;
  await platform.start();
  const server = await platform.httpServer();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await platform.close();
    const problem = listenProblem(error, config.host, config.port);
    if (!problem) throw error;
    console.error(problem);
    process.exit(2);
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, data_dir: config.dataDir, event_store: config.eventStoreUrl ? 'eventstoredb' : 'sqlite', read_store: config.mongoDbUrl ? 'mongodb' : 'sqlite' }, 'platform listening');

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error({ timeout_ms: config.shutdownTimeoutMs }, 'shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    server.close(() => {
      platform
        .close()
        .then(() => {
          logger.info({}, 'stopped');
          process.exit(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, 'error while closing');
          process.exit(1);
        });
    });
    server.closeIdleConnections();
    // Upgraded sockets keep the server open until they end: the widget's are closed 1001 once
    // their running turns finished (half the deadline at most), so the widget reconnects elsewhere.
    platform.closeWidgetSockets(Math.floor(config.shutdownTimeoutMs / 2)).catch((error: unknown) => logger.error({ err: error }, 'error while closing widget sockets'));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** A configuration mistake the operator can fix, said in one line; null for anything else. */
function listenProblem(error: unknown, host: string, port: number): string | null {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return `PORT: ${host}:${port} is already in use; stop what listens there or set PORT to another port`;
  if (code === 'EACCES') return `PORT: no permission to listen on ${host}:${port}; choose a port above 1023 or run with the needed privilege`;
  if (code === 'EADDRNOTAVAIL') return `HOST: ${host} is not an address of this machine`;
  return null;
}

main().catch((error: unknown) => {
  if (error instanceof DataFolderError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
