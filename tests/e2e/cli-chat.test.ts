// `chat ask`: the operator tries a tenant's assistant from the CLI. As a separate process on
// the data folder (the embedded engine, no knowledge indexed yet: the plain no-answer reply),
// and in process with a seeded search index (the answer quoted from a passage, with its source).

import { expect } from 'chai';
import { runCli } from '../../adapters/cli/main';
import { handleCommand } from '../../application/command-handling/handle-command';
import { createTenant } from '../../application/tenant/tenant-commands';
import { workspaceAggregate } from '../../application/workspace/workspaces';
import { conversationStream } from '../../domain/conversation/conversation';
import { workspaceStream } from '../../domain/workspace/workspace';
import { createPlatform, loadConfig } from '../../infrastructure/composition-root';
import { silentLogger } from '../../application/ports/logger';
import { userContext } from '../support/context';
import { cli } from '../support/cli';
import { temporaryDirectory } from '../support/files';
import { InMemorySearchIndex, chunksOf } from '../support/search-index';

describe('operator CLI: chat ask', function () {
  this.timeout(30_000);

  describe('as a separate process', () => {
    const dir = temporaryDirectory();
    after(() => dir.remove());

    it('asks the assistant of a tenant and prints its answer; says when the knowledge base has nothing', async () => {
      const created = await cli(dir.path, 'tenants', 'create', '--name', 'Chatty', '--slug', 'chatty');
      const tenantId = /created tenant (\S+)/.exec(created.stdout)![1];
      const asked = await cli(dir.path, 'chat', 'ask', '--tenant', tenantId, 'How long do refunds take?');
      expect(asked.code, asked.stderr).to.equal(0);
      const conversationId = /^conversation (\S+)$/m.exec(asked.stdout)![1];
      expect(asked.stdout).to.contain('I could not find anything about this in the knowledge base');
      expect(asked.stdout).to.contain('model: extractive; nothing relevant in the knowledge base');
      const read = await cli(dir.path, 'events', 'read', conversationStream(conversationId));
      const events = read.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(events.map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
      expect(events[1].data.author).to.deep.equal({ kind: 'system', id: 'operator-cli' });
      expect(events[1].metadata.actor).to.deep.equal({ kind: 'system', id: 'operator-cli' });
    });

    it('refuses without a tenant or a question, and for an unknown tenant', async () => {
      expect((await cli(dir.path, 'chat', 'ask', 'a question')).code).to.equal(2);
      expect((await cli(dir.path, 'chat', 'ask', '--tenant', 'x')).code).to.equal(2);
      const unknown = await cli(dir.path, 'chat', 'ask', '--tenant', 'nobody', 'Hello?');
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.contain('tenant_not_found');
    });
  });

  describe('in process, with knowledge indexed', () => {
    const dir = temporaryDirectory();
    const index = new InMemorySearchIndex();
    const previousDataDir = process.env.DATA_DIR;
    let tenantId: string;
    let workspaceId: string;

    before(async () => {
      const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent' }), { logger: silentLogger });
      try {
        tenantId = (await createTenant(platform.commands, { name: 'Known', slug: 'known' }, userContext())).tenant_id;
        workspaceId = 'known-workspace';
        await handleCommand(
          platform.commands,
          workspaceAggregate,
          workspaceStream(workspaceId),
          { type: 'CreateWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId, name: 'Help center', is_default: true } },
          userContext({ tenant_id: tenantId }),
        );
      } finally {
        await platform.close();
      }
      await index.replaceDocument(
        tenantId,
        'doc-refunds',
        chunksOf({ tenant_id: tenantId, workspace_id: workspaceId, document_id: 'doc-refunds', title: 'Refund policy' }, ['Refunds are issued within 14 days of the request.']),
      );
      process.env.DATA_DIR = dir.path;
    });
    after(() => {
      if (previousDataDir === undefined) delete process.env.DATA_DIR;
      else process.env.DATA_DIR = previousDataDir;
      dir.remove();
    });

    it('prints the answer quoted from the passage and its source', async () => {
      const lines: string[] = [];
      const code = await runCli(['chat', 'ask', '--tenant', tenantId, '--workspace', workspaceId, 'How long do refunds take?'], (line) => lines.push(line), undefined, { platform: { searchIndex: index } });
      expect(code).to.equal(0);
      const output = lines.join('\n');
      expect(output).to.contain('From "Refund policy" [1]:\n> Refunds are issued within 14 days of the request.');
      expect(output).to.contain('model: extractive; answered from the knowledge base');
      expect(output).to.contain('sources:\n  [1] Refund policy (document doc-refunds, chunk doc-refunds:0)');
    });

    it('refuses a workspace the tenant does not have', async () => {
      try {
        await runCli(['chat', 'ask', '--tenant', tenantId, '--workspace', 'elsewhere', 'Refunds?'], () => undefined, undefined, { platform: { searchIndex: index } });
        expect.fail('expected a refusal');
      } catch (error) {
        expect((error as { code?: string }).code).to.equal('workspace_not_found');
      }
    });
  });
});
