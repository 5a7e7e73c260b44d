// `erase conversation`, `erase lead`, `erase invitation`, `erase end-user` and `erase orchestration-payloads`: the operator erases for an organization (docs/personal-data.md),
// also one whose admins cannot sign in (suspended here). The CLI runs as a separate process on a
// data folder; the test reads the result through a platform opened on the same folder.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { invitationAggregate } from '../../application/invitation/invitations';
import { orchestrationEventAggregate } from '../../application/orchestration/orchestration-events';
import { orchestrationEventStream, resolveEnvelope } from '../../domain/orchestration-event/orchestration-event';
import { ManualClock } from '../support/stores';
import { verifiedPartyId } from '../../application/widget/widget-access';
import { leadAggregate } from '../../application/lead/lead-aggregate';
import { silentLogger } from '../../application/ports/logger';
import { type ConversationCommand, conversationStream } from '../../domain/conversation/conversation';
import { invitationStream } from '../../domain/invitation/invitation';
import { leadStream } from '../../domain/lead/lead';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { createPlatform, loadConfig } from '../../infrastructure/composition-root';
import { userContext } from '../support/context';
import { cli } from '../support/cli';
import { temporaryDirectory } from '../support/files';

describe('operator CLI: erase conversation, erase lead, erase invitation, erase end-user', function () {
  this.timeout(60_000);
  const dir = temporaryDirectory();
  after(() => dir.remove());

  /** The stream as the platform reads it: opened, or erased. */
  async function readAsPlatform(stream: string): Promise<Array<{ type: string; data: Record<string, unknown> }>> {
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main' }), { logger: silentLogger });
    try {
      return (await platform.eventStore.readStream(stream)) as unknown as Array<{ type: string; data: Record<string, unknown> }>;
    } finally {
      await platform.close();
    }
  }

  it('erases a conversation of a suspended organization for it; again answers the first erasure; refuses another organization\'s', async () => {
    const tenantId = /created tenant (\S+)/.exec((await cli(dir.path, 'tenants', 'create', '--name', 'Erasable', '--slug', 'erasable')).stdout)![1];
    const asked = await cli(dir.path, 'chat', 'ask', '--tenant', tenantId, 'I am Dana Scully, my badge is 2317616');
    const conversationId = /^conversation (\S+)$/m.exec(asked.stdout)![1];
    expect((await cli(dir.path, 'tenants', 'suspend', tenantId, '--reason', 'closing the account')).code).to.equal(0);
    const otherId = /created tenant (\S+)/.exec((await cli(dir.path, 'tenants', 'create', '--name', 'Other', '--slug', 'other-org')).stdout)![1];

    const foreign = await cli(dir.path, 'erase', 'conversation', conversationId, '--tenant', otherId);
    expect(foreign.code).to.equal(1);
    expect(foreign.stderr).to.contain('conversation_not_found');
    expect((await readAsPlatform(conversationStream(conversationId)))[1].data.text).to.equal('I am Dana Scully, my badge is 2317616');

    const erased = await cli(dir.path, 'erase', 'conversation', conversationId, '--tenant', tenantId);
    expect(erased.code, erased.stderr).to.equal(0);
    const [, at] = /^erased conversation \S+ \(first erased at (\S+)\)$/m.exec(erased.stdout)!;
    const events = await readAsPlatform(conversationStream(conversationId));
    expect(events.map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered', 'ConversationErased']);
    expect(events[1].data.text).to.equal(ERASED_PERSONAL_DATA);
    const stored = await cli(dir.path, 'events', 'read', conversationStream(conversationId));
    expect(stored.stdout).to.not.contain('Dana Scully');
    expect(stored.stdout).to.contain('"actor":{"kind":"system","id":"operator-cli"}');

    const again = await cli(dir.path, 'erase', 'conversation', conversationId, '--tenant', tenantId);
    expect(again.stdout).to.contain(`(first erased at ${at})`);
  });

  it('erases a lead; refuses without an ID or a tenant (2), and an unknown lead (1)', async () => {
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main' }), { logger: silentLogger });
    const tenantId = 'lead-tenant';
    try {
      await handleCommand(
        platform.commands,
        leadAggregate,
        leadStream('lead-1'),
        { type: 'CaptureLead', data: { lead_id: 'lead-1', tenant_id: tenantId, fields: { name: 'Fox Mulder', email: 'fox@example.com' }, conversation_id: null, source: 'widget', visitor: { kind: 'end_user', id: 'visitor:1' } } },
        userContext({ tenant_id: tenantId }),
      );
    } finally {
      await platform.close();
    }
    expect((await cli(dir.path, 'erase', 'lead', 'lead-1')).code).to.equal(2);
    expect((await cli(dir.path, 'erase', 'lead', '--tenant', tenantId)).code).to.equal(2);
    const unknown = await cli(dir.path, 'erase', 'lead', 'no-such-lead', '--tenant', tenantId);
    expect([unknown.code, unknown.stderr.includes('lead_not_found')]).to.deep.equal([1, true]);

    const erased = await cli(dir.path, 'erase', 'lead', 'lead-1', '--tenant', tenantId);
    expect(erased.code, erased.stderr).to.equal(0);
    const [captured, gone] = await readAsPlatform(leadStream('lead-1'));
    expect(captured.data).to.deep.include({ name: ERASED_PERSONAL_DATA, email: ERASED_PERSONAL_DATA });
    expect(gone).to.deep.include({ type: 'LeadErased' });
    expect(gone.data.erased_by).to.deep.equal({ kind: 'system', id: 'operator-cli' });
  });

  it('erases an end user named by the host site\'s user id; refuses without a tenant or with both ways of naming them (2)', async () => {
    const tenantId = 'end-user-tenant';
    const conversationId = 'end-user-conversation';
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main' }), { logger: silentLogger });
    try {
      const visitor = { kind: 'end_user' as const, id: verifiedPartyId(platform.secrets, tenantId, 'fox-1') };
      const record = (command: ConversationCommand) => handleCommand(platform.commands, conversationAggregate, conversationStream(conversationId), command, userContext({ tenant_id: tenantId, actor: visitor }));
      await record({ type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: tenantId, workspace_id: null, channel: 'widget', title: 'The truth', started_by: visitor, verified_user_id: 'fox-1' } });
      await record({ type: 'PostUserMessage', data: { message_id: 'm1', text: 'I want to believe', author: visitor, end_user_token_sealed: null, end_user_session_sealed: null } });
    } finally {
      await platform.close();
    }
    expect((await cli(dir.path, 'erase', 'end-user', '--verified-user-id', 'fox-1')).code).to.equal(2);
    expect((await cli(dir.path, 'erase', 'end-user', '--tenant', tenantId, '--verified-user-id', 'fox-1', '--whatsapp-number', '+15550001')).code).to.equal(2);
    const erased = await cli(dir.path, 'erase', 'end-user', '--tenant', tenantId, '--verified-user-id', 'fox-1');
    expect(erased.code, erased.stderr).to.equal(0);
    expect(erased.stdout).to.include('erased 1 conversation(s), 0 lead(s)').and.include(`conversation ${conversationId}`);
    const [started, posted] = await readAsPlatform(conversationStream(conversationId));
    expect(started.data).to.deep.include({ title: ERASED_PERSONAL_DATA, verified_user_id: ERASED_PERSONAL_DATA });
    expect(posted.data).to.deep.include({ text: ERASED_PERSONAL_DATA });
  });

  it('erases an invitation; refuses another organization\'s (1)', async () => {
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main' }), { logger: silentLogger });
    const tenantId = 'invitation-tenant';
    try {
      await handleCommand(
        platform.commands,
        invitationAggregate,
        invitationStream('invitation-1'),
        { type: 'SendInvitation', data: { tenant_id: tenantId, invitation_id: 'invitation-1', email: 'walter.skinner@example.com', role: 'member', token_digest: 'digest', invited_by: 'someone' } },
        userContext({ tenant_id: tenantId }),
      );
    } finally {
      await platform.close();
    }
    const foreign = await cli(dir.path, 'erase', 'invitation', 'invitation-1', '--tenant', 'another-tenant');
    expect([foreign.code, foreign.stderr.includes('invitation_not_found')]).to.deep.equal([1, true]);

    const erased = await cli(dir.path, 'erase', 'invitation', 'invitation-1', '--tenant', tenantId);
    expect(erased.code, erased.stderr).to.equal(0);
    expect(erased.stdout).to.match(/^erased invitation invitation-1 \(first erased at \S+\)$/m);
    const [sent, gone] = await readAsPlatform(invitationStream('invitation-1'));
    expect(sent.data).to.deep.include({ email: ERASED_PERSONAL_DATA });
    expect(gone).to.deep.include({ type: 'InvitationErased' });
    expect(gone.data.erased_by).to.deep.equal({ kind: 'system', id: 'operator-cli' });
    expect((await cli(dir.path, 'events', 'read', invitationStream('invitation-1'))).stdout).to.not.contain('walter.skinner');
  });

  it('erases the orchestration payloads of the days before a date; refuses without its flags (2) or with a day too recent (1)', async () => {
    const tenantId = 'payloads-tenant';
    const threeDaysAgo = new Date(Date.now() - 3 * 24 * 3600_000);
    const platform = await createPlatform(loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', PROJECTION_THREAD: 'main' }), { logger: silentLogger, clock: new ManualClock(threeDaysAgo) });
    const envelope = resolveEnvelope({ name: 'shop.order.created', payload: { order: 'o-1', email: 'fox.mulder@example.com' } }, 'payload-event-1', null, { maxPayloadBytes: 65536, maxDepth: 8 });
    if (envelope._tag !== 'Right') throw new Error('the envelope was refused');
    try {
      await handleCommand(
        platform.commands,
        orchestrationEventAggregate,
        orchestrationEventStream('payload-event-1'),
        { type: 'EmitOrchestrationEvent', data: { event_id: 'payload-event-1', tenant_id: tenantId, envelope: envelope.right, received_via: 'emit' } },
        userContext({ tenant_id: tenantId }),
      );
    } finally {
      await platform.close();
    }
    expect((await cli(dir.path, 'erase', 'orchestration-payloads', '--tenant', tenantId)).code).to.equal(2);
    const today = new Date().toISOString().slice(0, 10);
    const tooRecent = await cli(dir.path, 'erase', 'orchestration-payloads', '--tenant', tenantId, '--before', today);
    expect([tooRecent.code, tooRecent.stderr.includes('invalid_request')]).to.deep.equal([1, true]);

    const yesterday = new Date(Date.now() - 24 * 3600_000).toISOString().slice(0, 10);
    const erased = await cli(dir.path, 'erase', 'orchestration-payloads', '--tenant', tenantId, '--before', yesterday);
    expect(erased.code, erased.stderr).to.equal(0);
    expect(erased.stdout).to.include(`erased the payloads of 1 day(s): ${threeDaysAgo.toISOString().slice(0, 10)}`);
    const [queued] = await readAsPlatform(orchestrationEventStream('payload-event-1'));
    expect(queued.data).to.deep.include({ payload: { $erased: true } });
    expect((await cli(dir.path, 'events', 'read', orchestrationEventStream('payload-event-1'))).stdout).to.not.contain('fox.mulder');
    const again = await cli(dir.path, 'erase', 'orchestration-payloads', '--tenant', tenantId, '--before', yesterday);
    expect(again.stdout).to.include('were left to erase');
  });
});
