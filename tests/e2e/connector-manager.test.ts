// `npm run connector-manager` as the operator runs it: the built entry point
// (dist/adapters/connector-manager/main.js) in its own process, calling the example connector
// run as another process (`npm run example:connector`'s entry point), stopped by SIGTERM; and
// refusing to start without its token.

import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const DIST = path.join(__dirname, '..', '..');
const TOKEN = 'e2e-connector-manager-token-0123';
const SECRET = 'e2e-example-connector-secret-0123';

interface Started {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
  /** The line that said the process was ready, matched. */
  match: RegExpExecArray;
}

/** Spawns `script` and resolves once a stdout line matches `ready`, with what it captured. */
function start(script: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<Started> {
  const child = spawn(process.execPath, [path.join(DIST, script)], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = ready.exec(line);
      if (match) resolve({ child, exited, stderr: () => stderr, match });
    });
    void exited.then((code) => reject(new Error(`${script} exited with ${code} before it was ready: ${stderr}`)));
  });
}

describe('npm run connector-manager (its own process)', function () {
  this.timeout(30_000);
  let connector: Started;
  let manager: Started;
  let connectorPort: string;
  let managerUrl: string;

  before(async () => {
    connector = await start('adapters/connector-sdk/example/main.js', { SVC_SIGNING_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' }, /listening on http:\/\/127\.0\.0\.1:(\d+)\/svc/);
    connectorPort = connector.match[1];
    manager = await start(
      'adapters/connector-manager/main.js',
      { CONNECTOR_MANAGER_TOKEN: TOKEN, CONNECTOR_MANAGER_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
      /"msg":"connector-manager listening"/,
    );
    managerUrl = `http://127.0.0.1:${(JSON.parse(manager.match.input) as { port: number }).port}`;
  });
  after(async () => {
    for (const started of [manager, connector]) {
      if (started && started.child.exitCode === null) {
        started.child.kill('SIGTERM');
        await started.exited;
      }
    }
  });

  it('calls the example connector for a caller with its token, and stops on SIGTERM', async () => {
    const response = await fetch(`${managerUrl}/v1/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'x-svc-tenant-id': 't-1', 'x-svc-workspace-id': '*' },
      body: JSON.stringify({ target_id: 'sdk:c-1', endpoint: `http://127.0.0.1:${connectorPort}`, signing_secret: SECRET, request: { type: 'tools.list' } }),
    });
    expect(response.status).to.equal(200);
    const answer = (await response.json()) as { answer: { type: string; tools: Array<{ name: string }> }; attempts: number };
    expect(answer.answer.type).to.equal('tools.list');
    expect(answer.answer.tools.map((tool) => tool.name)).to.include('order_status');
    manager.child.kill('SIGTERM');
    expect(await manager.exited).to.equal(0);
  });

  it('refuses to start without CONNECTOR_MANAGER_TOKEN, saying so (exit code 2)', async () => {
    const child = spawn(process.execPath, [path.join(DIST, 'adapters/connector-manager/main.js')], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CONNECTOR_MANAGER_TOKEN: '' } });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr).to.match(/CONNECTOR_MANAGER_TOKEN: expected the bearer token/);
  });
});
