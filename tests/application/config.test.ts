import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../infrastructure/config/config';

describe('configuration from the environment', () => {
  it('has defaults for everything', () => {
    const config = loadConfig({});
    expect(config).to.deep.include({ port: 8080, sqliteSynchronous: 'full', eventStoreUrl: null, mongoDbUrl: null, metricsPublic: false });
    expect(config.dataDir).to.match(/\/data$/);
  });

  it('reports every bad variable at once, each with what it expected', () => {
    try {
      loadConfig({ PORT: 'eighty', SQLITE_SYNCHRONOUS: 'always', EVENTSTORE_URL: 'http://x', METRICS_PUBLIC: 'yes' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigError);
      expect((error as ConfigError).problems).to.deep.equal([
        'PORT: expected an integer from 0 to 65535, got "eighty"',
        'SQLITE_SYNCHRONOUS: expected one of full, normal, off, got "always"',
        'EVENTSTORE_URL: expected a URL starting with esdb:// or esdb+discover:// or kurrentdb:// or kurrentdb+discover:// or kdb:// or kdb+discover://, got "http://x"',
        'METRICS_PUBLIC: expected "true" or "false", got "yes"',
      ]);
    }
  });

  it('never echoes a secret it refuses', () => {
    try {
      loadConfig({ METRICS_AUTH_TOKEN: ' ' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal(['METRICS_AUTH_TOKEN: expected a non-empty string, got (hidden)']);
    }
  });

  it('reads the lease settings: a TTL in range and a printable holder id', () => {
    expect(loadConfig({})).to.deep.include({ leaseTtlMs: 15_000, leaseHolderId: null });
    expect(loadConfig({ LEASE_TTL_MS: '2000', LEASE_HOLDER_ID: 'web-1' })).to.deep.include({ leaseTtlMs: 2000, leaseHolderId: 'web-1' });
    expect(() => loadConfig({ LEASE_TTL_MS: '10' })).to.throw(ConfigError, /LEASE_TTL_MS: expected an integer from 100 to 600000/);
    expect(() => loadConfig({ LEASE_HOLDER_ID: 'web 1' })).to.throw(ConfigError, /LEASE_HOLDER_ID: expected 1 to 200 printable characters/);
  });

  it('keeps an impersonation token to an hour at most (IMPERSONATION_TTL_SECONDS, 15 minutes by default)', () => {
    expect(loadConfig({}).impersonationTtlSeconds).to.equal(900);
    expect(loadConfig({ IMPERSONATION_TTL_SECONDS: '3600' }).impersonationTtlSeconds).to.equal(3600);
    expect(() => loadConfig({ IMPERSONATION_TTL_SECONDS: '3601' })).to.throw(ConfigError, /IMPERSONATION_TTL_SECONDS: expected an integer from 60 to 3600/);
  });

  it('wants a metrics token in production unless metrics are public', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).to.throw(ConfigError, /METRICS_AUTH_TOKEN/);
    expect(loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'true' }).metricsPublic).to.equal(true);
  });

  it('refuses production without SMTP_URL unless MAIL_OUTBOX_ONLY=true says so on purpose (#9.7)', () => {
    try {
      loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal([
        'SMTP_URL: expected an smtp:// or smtps:// URL in production unless MAIL_OUTBOX_ONLY=true (no email could be sent; they would only be kept in the outbox)',
      ]);
    }
    expect(() => loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'true' })).to.not.throw();
    expect(() => loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', SMTP_URL: 'smtps://u:p@mail.example.com' })).to.not.throw();
    expect(() => loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'yes' })).to.throw(ConfigError, /MAIL_OUTBOX_ONLY: expected "true" or "false"/);
    // Development and tests keep the log mailer without asking.
    expect(() => loadConfig({ NODE_ENV: 'development' })).to.not.throw();
  });
});

describe('GraphQL configuration', () => {
  it('limits depth, fields and cost by default, and takes each from the environment', () => {
    expect(loadConfig({})).to.deep.include({ graphqlMaxDepth: 15, graphqlMaxFields: 300, graphqlMaxCost: 1000 });
    expect(loadConfig({ GRAPHQL_MAX_DEPTH: '8', GRAPHQL_MAX_FIELDS: '50', GRAPHQL_MAX_COST: '400' })).to.deep.include({ graphqlMaxDepth: 8, graphqlMaxFields: 50, graphqlMaxCost: 400 });
    expect(() => loadConfig({ GRAPHQL_MAX_DEPTH: '0' })).to.throw(ConfigError, /GRAPHQL_MAX_DEPTH/);
  });

  it('answers introspection outside production, and in production only when GRAPHQL_INTROSPECTION=true', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).graphqlIntrospection).to.equal(true);
    expect(loadConfig({ NODE_ENV: 'test' }).graphqlIntrospection).to.equal(true);
    expect(loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'true' }).graphqlIntrospection).to.equal(false);
    expect(loadConfig({ NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'true', GRAPHQL_INTROSPECTION: 'true' }).graphqlIntrospection).to.equal(true);
    expect(loadConfig({ NODE_ENV: 'development', GRAPHQL_INTROSPECTION: 'false' }).graphqlIntrospection).to.equal(false);
    expect(() => loadConfig({ GRAPHQL_INTROSPECTION: 'on' })).to.throw(ConfigError, /GRAPHQL_INTROSPECTION: expected "true" or "false"/);
  });
});

describe('payment provider configuration', () => {
  it('reads PUBLIC_URL as an http(s) base without a trailing slash, query or fragment', () => {
    expect(loadConfig({}).publicUrl).to.equal(null);
    expect(loadConfig({ PUBLIC_URL: 'https://svc.example.com/' }).publicUrl).to.equal('https://svc.example.com');
    expect(loadConfig({ PUBLIC_URL: 'https://example.com/svc' }).publicUrl).to.equal('https://example.com/svc');
    for (const bad of ['svc.example.com', 'ftp://svc.example.com', 'https://svc.example.com/?a=1', 'https://svc.example.com/#top']) {
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).to.throw(ConfigError, /PUBLIC_URL: expected an http:\/\/ or https:\/\/ URL without query or fragment/);
    }
  });

  it('takes Stripe keys both or neither, and never echoes a refused key or webhook secret', () => {
    expect(loadConfig({})).to.deep.include({ stripeSecretKey: null, stripeWebhookSecret: null, billingSandboxWebhookSecret: null });
    expect(loadConfig({ STRIPE_SECRET_KEY: 'sk_test_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_abc123' })).to.deep.include({ stripeSecretKey: 'sk_test_abc123', stripeWebhookSecret: 'whsec_abc123' });
    for (const half of [{ STRIPE_SECRET_KEY: 'sk_test_abc123' }, { STRIPE_WEBHOOK_SECRET: 'whsec_abc123' }]) {
      expect(() => loadConfig(half)).to.throw(ConfigError, /STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET go together/);
    }
    try {
      loadConfig({ STRIPE_SECRET_KEY: 'pk_test_public', STRIPE_WEBHOOK_SECRET: 'secret', BILLING_SANDBOX_WEBHOOK_SECRET: 'short' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal([
        'BILLING_SANDBOX_WEBHOOK_SECRET: expected at least 16 characters, got (hidden)',
        'STRIPE_SECRET_KEY: expected a Stripe secret or restricted key (sk_... or rk_...), got (hidden)',
        "STRIPE_WEBHOOK_SECRET: expected a Stripe endpoint's signing secret (whsec_...), got (hidden)",
      ]);
    }
    expect(loadConfig({ BILLING_SANDBOX_WEBHOOK_SECRET: 'a sandbox secret of some length' }).billingSandboxWebhookSecret).to.equal('a sandbox secret of some length');
  });

  it('reads the embeddings endpoint: off by default, a key only with a URL, never echoing the key', () => {
    expect(loadConfig({})).to.deep.include({ embeddingsBaseUrl: null, embeddingsApiKey: null, embeddingsModel: 'text-embedding-3-small', embeddingsBatchSize: 64 });
    expect(loadConfig({ EMBEDDINGS_BASE_URL: 'http://localhost:11434/v1', EMBEDDINGS_MODEL: 'nomic-embed-text', EMBEDDINGS_BATCH_SIZE: '16' })).to.deep.include({
      embeddingsBaseUrl: 'http://localhost:11434/v1',
      embeddingsApiKey: null,
      embeddingsModel: 'nomic-embed-text',
      embeddingsBatchSize: 16,
    });
    expect(() => loadConfig({ EMBEDDINGS_API_KEY: 'sk-abc' })).to.throw(ConfigError, /EMBEDDINGS_BASE_URL: expected the endpoint EMBEDDINGS_API_KEY is for/);
    try {
      loadConfig({ EMBEDDINGS_BASE_URL: 'ftp://x', EMBEDDINGS_BATCH_SIZE: '0', EMBEDDINGS_API_KEY: 'sk-abc' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal([
        'EMBEDDINGS_BASE_URL: expected a URL starting with http:// or https://, got "ftp://x"',
        'EMBEDDINGS_BATCH_SIZE: expected an integer from 1 to 2048, got "0"',
      ]);
      expect((error as ConfigError).message).to.not.contain('sk-abc');
    }
  });
});

describe('assistant configuration', () => {
  it('uses the embedded engine by default, a model server with LLM_BASE_URL and LLM_MODEL together', () => {
    expect(loadConfig({})).to.deep.include({ llmBaseUrl: null, llmModel: null, llmApiKey: null, llmTimeoutMs: 60_000, chatHeartbeatMs: 15_000 });
    expect(loadConfig({ LLM_BASE_URL: 'http://localhost:11434/v1', LLM_MODEL: 'llama3', LLM_API_KEY: 'sk-local', LLM_TIMEOUT_MS: '5000', CHAT_HEARTBEAT_MS: '250' })).to.deep.include({
      llmBaseUrl: 'http://localhost:11434/v1',
      llmModel: 'llama3',
      llmApiKey: 'sk-local',
      llmTimeoutMs: 5000,
      chatHeartbeatMs: 250,
    });
    for (const half of [{ LLM_BASE_URL: 'http://localhost:11434/v1' }, { LLM_MODEL: 'llama3' }]) {
      expect(() => loadConfig(half)).to.throw(ConfigError, /LLM_BASE_URL and LLM_MODEL go together/);
    }
    try {
      loadConfig({ LLM_BASE_URL: 'localhost:11434', LLM_MODEL: 'llama3', LLM_TIMEOUT_MS: '10', CHAT_HEARTBEAT_MS: '0' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal([
        'LLM_BASE_URL: expected a URL starting with http:// or https://, got "localhost:11434"',
        'LLM_TIMEOUT_MS: expected an integer from 100 to 600000, got "10"',
        'CHAT_HEARTBEAT_MS: expected an integer from 1 to 3600000, got "0"',
      ]);
    }
  });
});

describe('outbound request configuration', () => {
  it('allows plain http and private networks only when OUTBOUND_ALLOW_INSECURE and OUTBOUND_ALLOW_PRIVATE_NETWORKS say, in development too', () => {
    expect(loadConfig({ NODE_ENV: 'development' })).to.deep.include({ outboundAllowInsecure: false, outboundAllowPrivateNetworks: false });
    expect(loadConfig({ NODE_ENV: 'test' })).to.deep.include({ outboundAllowInsecure: false, outboundAllowPrivateNetworks: false });
    expect(loadConfig({ OUTBOUND_ALLOW_INSECURE: 'true' })).to.deep.include({ outboundAllowInsecure: true, outboundAllowPrivateNetworks: false });
    expect(loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' })).to.deep.include({ outboundAllowInsecure: false, outboundAllowPrivateNetworks: true });
    expect(() => loadConfig({ OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'yes' })).to.throw(ConfigError, /OUTBOUND_ALLOW_PRIVATE_NETWORKS: expected "true" or "false"/);
  });

  it('still reads the deprecated HANDOFF_ALLOW_* names, the new names winning when both are set', () => {
    expect(loadConfig({ HANDOFF_ALLOW_INSECURE_URLS: 'true', HANDOFF_ALLOW_PRIVATE_NETWORKS: 'true' })).to.deep.include({ outboundAllowInsecure: true, outboundAllowPrivateNetworks: true });
    expect(loadConfig({ HANDOFF_ALLOW_INSECURE_URLS: 'true', OUTBOUND_ALLOW_INSECURE: 'false', HANDOFF_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false' })).to.deep.include({
      outboundAllowInsecure: false,
      outboundAllowPrivateNetworks: false,
    });
    expect(() => loadConfig({ HANDOFF_ALLOW_PRIVATE_NETWORKS: 'yes' })).to.throw(ConfigError, /HANDOFF_ALLOW_PRIVATE_NETWORKS: expected "true" or "false"/);
  });
});

describe('handoff configuration', () => {
  it('retries a handoff 6 times from 60 s, each POST 10 s at most, by default', () => {
    expect(loadConfig({})).to.deep.include({ handoffMaxAttempts: 6, handoffRetryBaseSeconds: 60, handoffTimeoutMs: 10_000 });
    expect(loadConfig({ HANDOFF_MAX_ATTEMPTS: '3', HANDOFF_RETRY_BASE_SECONDS: '1', HANDOFF_TIMEOUT_MS: '500' })).to.deep.include({ handoffMaxAttempts: 3, handoffRetryBaseSeconds: 1, handoffTimeoutMs: 500 });
    expect(() => loadConfig({ HANDOFF_MAX_ATTEMPTS: '0' })).to.throw(ConfigError, /HANDOFF_MAX_ATTEMPTS: expected an integer from 1 to 100/);
  });
});

describe('business tool execution configuration', () => {
  it('gives a tool call 15 s and 1 MiB of answer by default, within bounds', () => {
    expect(loadConfig({})).to.deep.include({ toolTimeoutMs: 15_000, toolMaxResponseBytes: 1024 * 1024 });
    expect(loadConfig({ TOOL_TIMEOUT_MS: '2000', TOOL_MAX_RESPONSE_BYTES: '4096' })).to.deep.include({ toolTimeoutMs: 2000, toolMaxResponseBytes: 4096 });
    expect(() => loadConfig({ TOOL_TIMEOUT_MS: '10' })).to.throw(ConfigError, /TOOL_TIMEOUT_MS: expected an integer from 100/);
    expect(() => loadConfig({ TOOL_MAX_RESPONSE_BYTES: '12' })).to.throw(ConfigError, /TOOL_MAX_RESPONSE_BYTES: expected an integer from 1024/);
  });
});

describe('orchestration metrics configuration', () => {
  it('gives 200 event names series of their own by default, 0 to 10,000', () => {
    expect(loadConfig({}).orchestrationDispatch.metricsEventNames).to.equal(200);
    expect(loadConfig({ ORCHESTRATION_METRICS_EVENT_NAMES: '0' }).orchestrationDispatch.metricsEventNames).to.equal(0);
    expect(() => loadConfig({ ORCHESTRATION_METRICS_EVENT_NAMES: '10001' })).to.throw(ConfigError, /ORCHESTRATION_METRICS_EVENT_NAMES: expected an integer from 0 to 10000/);
  });
});

describe('previous token keys (TOKEN_PREVIOUS_PUBLIC_KEYS)', () => {
  it('reads comma-separated PASERK k4.public keys, none by default, and names the variable when one is not', () => {
    const key = `k4.public.${Buffer.alloc(32, 7).toString('base64url')}`;
    const other = `k4.public.${Buffer.alloc(32, 9).toString('base64url')}`;
    expect(loadConfig({}).tokenPreviousPublicKeys).to.deep.equal([]);
    expect(loadConfig({ TOKEN_PREVIOUS_PUBLIC_KEYS: ` ${key}, ${other} ` }).tokenPreviousPublicKeys).to.deep.equal([key, other]);
    for (const bad of [`k4.secret.${Buffer.alloc(64, 1).toString('base64url')}`, `k4.public.${Buffer.alloc(16, 1).toString('base64url')}`, `${key},nope`]) {
      expect(() => loadConfig({ TOKEN_PREVIOUS_PUBLIC_KEYS: bad }), bad).to.throw(ConfigError, /TOKEN_PREVIOUS_PUBLIC_KEYS: expected PASERK k4.public keys/);
    }
  });
});

describe('document storage configuration', () => {
  it('keeps documents under DATA_DIR unless S3_BUCKET is set, and limits them to DOCUMENT_MAX_BYTES (20 MiB by default)', () => {
    expect(loadConfig({})).to.deep.include({ s3: null, documentMaxBytes: 20 * 1024 * 1024 });
    expect(loadConfig({ DOCUMENT_MAX_BYTES: '1048576' }).documentMaxBytes).to.equal(1048576);
    expect(() => loadConfig({ DOCUMENT_MAX_BYTES: '10' })).to.throw(ConfigError, /DOCUMENT_MAX_BYTES: expected an integer from 1024/);
    expect(loadConfig({ S3_BUCKET: 'svc-documents' }).s3).to.deep.equal({ bucket: 'svc-documents', endpoint: null, region: 'us-east-1', credentials: null, forcePathStyle: false });
    expect(
      loadConfig({ S3_BUCKET: 'docs', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_REGION: 'eu-west-3', S3_ACCESS_KEY_ID: 'minio', S3_SECRET_ACCESS_KEY: 'minio-secret', S3_FORCE_PATH_STYLE: 'true' }).s3,
    ).to.deep.equal({ bucket: 'docs', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-3', credentials: { accessKeyId: 'minio', secretAccessKey: 'minio-secret' }, forcePathStyle: true });
  });

  it("reads documents' text on one worker thread by default, within two minutes and 1 GiB of heap each; 0 threads reads them on the serving thread", () => {
    expect(loadConfig({}).extraction).to.deep.equal({ threads: 1, timeoutMs: 120_000, maxHeapMb: 1024 });
    expect(loadConfig({ EXTRACTION_THREADS: '0', EXTRACTION_TIMEOUT_MS: '5000', EXTRACTION_MAX_HEAP_MB: '256' }).extraction).to.deep.equal({ threads: 0, timeoutMs: 5000, maxHeapMb: 256 });
    expect(() => loadConfig({ EXTRACTION_THREADS: '17', EXTRACTION_TIMEOUT_MS: '10', EXTRACTION_MAX_HEAP_MB: 'lots' })).to.throw(
      ConfigError,
      /EXTRACTION_THREADS: expected an integer from 0 to 16[\s\S]*EXTRACTION_TIMEOUT_MS: expected an integer from 1000 to 3600000[\s\S]*EXTRACTION_MAX_HEAP_MB: expected an integer from 64 to 16384/,
    );
  });

  it('refuses a bad bucket or endpoint, and a key id without its secret, never echoing the secret', () => {
    expect(() => loadConfig({ S3_BUCKET: 'Bad_Bucket' })).to.throw(ConfigError, /S3_BUCKET: expected an S3 bucket name/);
    expect(() => loadConfig({ S3_BUCKET: 'docs', S3_ENDPOINT: 'minio:9000' })).to.throw(ConfigError, /S3_ENDPOINT: expected a URL starting with http:\/\/ or https:\/\//);
    expect(() => loadConfig({ S3_BUCKET: 'docs', S3_ACCESS_KEY_ID: 'minio' })).to.throw(ConfigError, /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together/);
    try {
      loadConfig({ S3_SECRET_ACCESS_KEY: 'the-secret', S3_FORCE_PATH_STYLE: 'yes' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).message).to.not.contain('the-secret');
    }
  });

  it('calls connectors directly within 30 s and 1 MiB by default; the connector-manager is neither served nor used until configured', () => {
    const config = loadConfig({});
    expect(config.connectors).to.deep.equal({ timeoutMs: 30_000, maxResponseBytes: 1024 * 1024 });
    expect(config.connectorManager).to.deep.equal({ token: null, url: null, port: 8090, maxAttempts: 3, retryBaseMs: 200 });
    const configured = loadConfig({ CONNECTOR_TIMEOUT_MS: '5000', CONNECTOR_MANAGER_TOKEN: 'a-token-of-16-chars', CONNECTOR_MANAGER_URL: 'http://manager:8090', CONNECTOR_MANAGER_MAX_ATTEMPTS: '5' });
    expect(configured.connectors.timeoutMs).to.equal(5000);
    expect(configured.connectorManager).to.deep.include({ token: 'a-token-of-16-chars', url: 'http://manager:8090', maxAttempts: 5 });
  });

  it('refuses a connector timeout out of range, a weak connector-manager token (never echoed), and its URL without the token', () => {
    expect(() => loadConfig({ CONNECTOR_TIMEOUT_MS: '50' })).to.throw(ConfigError, /CONNECTOR_TIMEOUT_MS: expected an integer from 100 to 120000/);
    expect(() => loadConfig({ CONNECTOR_MANAGER_MAX_ATTEMPTS: '0' })).to.throw(ConfigError, /CONNECTOR_MANAGER_MAX_ATTEMPTS: expected an integer from 1 to 10/);
    try {
      loadConfig({ CONNECTOR_MANAGER_TOKEN: 'has a space in it ok' });
      expect.fail('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).problems).to.deep.equal(['CONNECTOR_MANAGER_TOKEN: expected 16 to 512 printable characters without spaces, got (hidden)']);
    }
    expect(() => loadConfig({ CONNECTOR_MANAGER_URL: 'ftp://manager' })).to.throw(ConfigError, /CONNECTOR_MANAGER_URL: expected a URL starting with http:\/\/ or https:\/\//);
    expect(() => loadConfig({ CONNECTOR_MANAGER_URL: 'http://manager:8090' })).to.throw(ConfigError, /CONNECTOR_MANAGER_TOKEN: expected the connector-manager's token/);
  });
});
