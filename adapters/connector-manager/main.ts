// `npm run connector-manager`: the connector-manager as its own process (router.ts), on
// HOST:CONNECTOR_MANAGER_PORT (default 0.0.0.0:8090). Reads only its own variables
// (loadConnectorManagerConfig): CONNECTOR_MANAGER_TOKEN (required), CONNECTOR_TIMEOUT_MS,
// CONNECTOR_MAX_RESPONSE_BYTES, CONNECTOR_MANAGER_MAX_ATTEMPTS, CONNECTOR_MANAGER_RETRY_BASE_MS,
// OUTBOUND_ALLOW_INSECURE, OUTBOUND_ALLOW_PRIVATE_NETWORKS, BODY_LIMIT_BYTES, LOG_LEVEL.
// Stops on SIGTERM/SIGINT once the calls in flight are answered.
import { ConfigError, createConnectorManagerProcess, loadConnectorManagerConfig } from '../../infrastructure/composition-root';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConnectorManagerConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const manager = createConnectorManagerProcess(config);
  const server = await manager.httpServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.connectorManager.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.connectorManager.port;
  manager.logger.info({ port, host: config.host }, 'connector-manager listening');

  const stop = (signal: string): void => {
    manager.logger.info({ signal }, 'connector-manager stopping');
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    console.error(`CONNECTOR_MANAGER_PORT: cannot listen (${code}); choose another port or host`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});
