// Starts the example connector: `npm run example:connector`.
// Environment: SVC_SIGNING_SECRET (required: the SDK Connection's signing secret),
// SVC_SIGNING_SECRET_PREVIOUS (optional, during a rotation), PORT (default 8080),
// HOST (default: all interfaces).
import { ConnectorConfigurationError } from '..';
import { createExampleConnector } from './connector';

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8080);
  const connector = createExampleConnector();
  const listening = await connector.listen(port, process.env.HOST || undefined);
  const stop = (): void => {
    listening.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // Logged last: whoever waits for this line may stop the process right away.
  console.log(`[example-connector] listening on ${listening.url}`);
}

main().catch((error: unknown) => {
  console.error(error instanceof ConnectorConfigurationError ? `[example-connector] ${error.message}` : error);
  process.exit(1);
});
