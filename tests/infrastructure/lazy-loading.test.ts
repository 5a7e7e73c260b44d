// A platform loads what its configuration uses: on the embedded stores, none of the clients of
// outside services (MongoDB, EventStoreDB, S3, Stripe, SMTP, OpenAI), no document library
// before a document, and no HTTP layer until it serves HTTP; the operator CLI, which never
// serves, starts without them. Checked in a fresh process (this one has loaded everything),
// by the modules in its require cache.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const DIST = path.resolve(__dirname, '../..');

/** What a fresh process has loaded after creating a platform on `dataDir` with `env`, and again after building its HTTP server. */
async function loadedModules(dataDir: string, env: Record<string, string> = {}): Promise<{ created: string[]; serving: string[] }> {
  const settings = { DATA_DIR: dataDir, SCRYPT_LOG_N: '12', LOG_LEVEL: 'silent', ...env };
  // A process that does not end in time says where it stood and what kept it alive (seen once
  // in a full run, never alone: the next occurrence explains itself instead of timing out).
  const script = `
    let stage = 'loading';
    const watchdog = setTimeout(() => {
      const handles = process._getActiveHandles().map((handle) => handle.constructor.name);
      console.error('still running at stage ' + stage + '; active handles: ' + handles.join(', '));
      process.exit(3);
    }, 40000);
    watchdog.unref();
    const { createPlatform, loadConfig } = require(${JSON.stringify(path.join(DIST, 'infrastructure/composition-root.js'))});
    const loaded = () => Object.keys(require.cache);
    (async () => {
      stage = 'creating the platform';
      const platform = await createPlatform(loadConfig(${JSON.stringify(settings)}));
      const created = loaded();
      stage = 'building the HTTP server';
      await platform.httpServer();
      const serving = loaded();
      stage = 'closing';
      await platform.close();
      stage = 'closed';
      process.stdout.write(JSON.stringify({ created, serving }));
    })().catch((error) => { console.error(error); process.exit(1); });`;
  const { stdout } = await run(process.execPath, ['-e', script], { maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as { created: string[]; serving: string[] };
}

const OUTSIDE_CLIENTS = ['mongodb', '@eventstore/db-client', '@aws-sdk/client-s3', 'stripe', 'nodemailer', 'openai'];
const DOCUMENT_LIBRARIES = ['mammoth', 'unpdf', 'html-to-text', 'csv-parse'];
const HTTP_LAYER = ['graphql', 'type-graphql', 'koa-body', 'formidable'];
const packageLoaded = (modules: string[], name: string): boolean => modules.some((file) => file.includes(`${path.sep}node_modules${path.sep}${name}${path.sep}`));

describe('what a platform process loads', function () {
  this.timeout(60_000);
  let dataDir: string;
  let modules: { created: string[]; serving: string[] };

  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'svc-lazy-'));
    modules = await loadedModules(dataDir);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('leaves out the clients of outside services it is not configured for, and the document libraries', () => {
    for (const name of [...OUTSIDE_CLIENTS, ...DOCUMENT_LIBRARIES]) expect(packageLoaded(modules.created, name), name).to.equal(false);
    for (const name of [...OUTSIDE_CLIENTS, ...DOCUMENT_LIBRARIES]) expect(packageLoaded(modules.serving, name), `${name}, serving`).to.equal(false);
  });

  it('loads the HTTP layer only once it serves HTTP', () => {
    const routers = (list: string[]): boolean => list.some((file) => file.endsWith(path.join('adapters', 'http', 'platform-routers.js')));
    expect(routers(modules.created)).to.equal(false);
    for (const name of HTTP_LAYER) expect(packageLoaded(modules.created, name), name).to.equal(false);
    expect(routers(modules.serving)).to.equal(true);
    for (const name of HTTP_LAYER) expect(packageLoaded(modules.serving, name), `${name}, serving`).to.equal(true);
  });

  it('loads the client of each outside service it is configured for, and closes them', async () => {
    // Nothing listens at these addresses: creating a platform contacts none of them.
    const nowhere = 'http://127.0.0.1:9';
    const configuredDir = mkdtempSync(path.join(tmpdir(), 'svc-lazy-configured-'));
    const configured = await loadedModules(configuredDir, {
      S3_BUCKET: 'svc-documents',
      S3_ENDPOINT: nowhere,
      S3_ACCESS_KEY_ID: 'local',
      S3_SECRET_ACCESS_KEY: 'local-secret',
      SMTP_URL: 'smtp://127.0.0.1:9',
      STRIPE_SECRET_KEY: 'sk_test_unused',
      STRIPE_WEBHOOK_SECRET: 'whsec_unused',
      LLM_BASE_URL: nowhere,
      LLM_MODEL: 'local-model',
      EMBEDDINGS_BASE_URL: nowhere,
      SPEECH_BASE_URL: nowhere,
    }).finally(() => rmSync(configuredDir, { recursive: true, force: true }));
    for (const name of ['@aws-sdk/client-s3', 'nodemailer', 'stripe', 'openai']) expect(packageLoaded(configured.created, name), name).to.equal(true);
    for (const name of ['mongodb', '@eventstore/db-client']) expect(packageLoaded(configured.created, name), name).to.equal(false);
  });
});
