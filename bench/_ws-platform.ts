// The ws bench's platform (bench/ws.ts): the embedded platform as `npm start` runs it, in a
// temporary data folder, with an organization whose message quota is lifted and whose default
// workspace holds the bench's documents, indexed by the indexing saga; /ws/chat on its server.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleCommand } from '../application/command-handling/handle-command';
import { addTextDocument } from '../application/document/documents';
import { silentLogger } from '../application/ports/logger';
import { setQuotaOverrides } from '../application/quota-override/quota-overrides';
import { register } from '../application/registration/register';
import type { Principal } from '../application/session/sessions';
import { systemContext } from '../application/shared/request-context';
import { tenantSettings } from '../application/tenant/tenant-queries';
import { userAggregate } from '../application/user/users';
import { userStream } from '../domain/user/user';
import { type Platform, createPlatform, loadConfig } from '../infrastructure/composition-root';
import { documentsOf } from './_ws-knowledge';
import { type Served, listen } from './_ws-server';

const PASSWORD = 'bench password 123';

export async function servePlatform(documents: number, synchronous: 'full' | 'normal' | 'off'): Promise<Served> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ws-'));
  const platform: Platform = await createPlatform(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SCRYPT_LOG_N: '12', SQLITE_SYNCHRONOUS: synchronous }), { logger: silentLogger });
  await platform.start();
  const { identity } = platform;
  const context = systemContext('bench');
  const owner = await register(identity, { email: 'owner@ws.bench', password: PASSWORD, name: 'Owner', organization_name: 'Widget Bench', slug: 'widget-bench' }, context);
  // Verified without the emailed code: the bench measures the widget, not sign-up.
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'IssueOtp', data: { purpose: 'email_verification', code_hash: 'bench', expires_at: '2999-01-01T00:00:00Z' } }, context);
  await handleCommand(identity, userAggregate, userStream(owner.user_id), { type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: 'bench' } }, context);
  // The free plan's 500 messages a month would end the run early.
  await setQuotaOverrides(identity, 'bench', owner.tenant_id, { overrides: { messages_per_month: null, documents: null }, reason: 'bench' }, context);
  await platform.readYourWrites(await platform.eventStore.headPosition());
  const principal: Principal = { kind: 'user', user_id: owner.user_id, tenant_id: owner.tenant_id, role: 'owner', jti: 'bench' };
  const workspaces = await platform.readStore.collection<{ id: string; is_default: boolean }>('workspaces').find({ where: { tenant_id: owner.tenant_id }, limit: 10 });
  const workspaceId = workspaces.items.find((workspace) => workspace.is_default)!.id;
  const added: string[] = [];
  for (const document of documentsOf(documents)) added.push((await addTextDocument({ ...platform.identity, blobStore: platform.blobStore, extractor: platform.textExtractor, documents: { maxBytes: platform.config.documentMaxBytes } }, principal, { workspace_id: workspaceId, ...document }, { ...context, tenant_id: owner.tenant_id })).value.id);
  // Indexed by the indexing saga, as uploads are.
  for (;;) {
    const statuses = await Promise.all(added.map(async (id) => (await platform.readStore.collection<{ id: string; status: string }>('documents').get(id))?.status));
    if (statuses.some((status) => status === 'failed')) throw new Error('a bench document failed to index');
    if (statuses.every((status) => status === 'ready')) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const token = (await tenantSettings(identity, principal)).widget_token!;
  const server = await platform.httpServer();
  const url = await listen(server);
  return {
    url,
    token,
    async close() {
      await platform.closeWidgetSockets();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await platform.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

