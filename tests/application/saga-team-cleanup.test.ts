// The team membership cleanup saga: its process manager given/when/then, and the saga over
// embedded stores: a redelivered MemberRemoved changes no team twice, and an old removal of
// someone who has joined again leaves their teams alone.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { membershipAggregate } from '../../application/membership/memberships';
import { teamAggregate } from '../../application/team/teams';
import { type MemberRemovedEvent, teamMembershipCleanup, teamMembershipCleanupSaga } from '../../application/team/team-cleanup-saga';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { silentLogger } from '../../application/ports/logger';
import type { MembershipCommand, MembershipEvent } from '../../domain/membership/membership';
import { membershipStream } from '../../domain/membership/membership';
import type { TeamCommand, TeamEvent } from '../../domain/team/team';
import { teamStream } from '../../domain/team/team';
import { teamsProjection } from '../../projections/teams';
import type { ProjectionRunner } from '../../projections/runner';
import { userContext } from '../support/context';
import { FIXED_NOW } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';
import { type EmbeddedStores, embeddedStores, projectionRunnerOver } from '../support/stores';

const T = 'tenant-1';
const at = FIXED_NOW.toISOString();

describe('team membership cleanup process manager', () => {
  const spec = processManagerSpec(teamMembershipCleanup);
  const joined = (user_id: string, role: 'owner' | 'member' = 'member'): MembershipEvent => ({ type: 'MemberJoined', data: { tenant_id: T, user_id, role, joined_at: at } });
  const removed: MemberRemovedEvent = { type: 'MemberRemoved', data: { tenant_id: T, user_id: 'max', reason: 'removed', removed_at: at } };
  const created: TeamEvent = { type: 'TeamCreated', data: { tenant_id: T, team_id: 'support', name: 'Support', description: null, created_at: at } };
  const staffed: TeamEvent = {
    type: 'TeamMembersSet',
    data: { tenant_id: T, team_id: 'support', members: [{ user_id: 'olga', can_write_documents: false }, { user_id: 'max', can_write_documents: true }] },
  };
  const without: TeamCommand = { type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'olga', can_write_documents: false }] } };

  it('takes the removed member out of a team they are in', () => {
    spec.given([joined('olga', 'owner'), joined('max'), removed, created, staffed]).when(removed).then([without]);
  });

  it('asks nothing when the team no longer has them (a redelivered removal), is deleted, or belongs to another tenant', () => {
    const afterCleanup: TeamEvent = { type: 'TeamMembersSet', data: { tenant_id: T, team_id: 'support', members: [{ user_id: 'olga', can_write_documents: false }] } };
    spec.given([joined('olga', 'owner'), joined('max'), removed, created, staffed, afterCleanup]).when(removed).thenNothingHappened();
    spec.given([joined('olga', 'owner'), joined('max'), removed, created, staffed, { type: 'TeamDeleted', data: { tenant_id: T, team_id: 'support', name: 'Support' } }]).when(removed).thenNothingHappened();
    spec.given([joined('olga', 'owner'), created, staffed]).when({ ...removed, data: { ...removed.data, tenant_id: 'tenant-2' } }).thenNothingHappened();
  });

  it('asks nothing for a member who has joined again since the removal', () => {
    spec.given([joined('olga', 'owner'), joined('max'), removed, joined('max'), created, staffed]).when(removed).thenNothingHappened();
  });
});

describe('team membership cleanup saga', () => {
  let stores: EmbeddedStores;
  let projections: ProjectionRunner;
  const context = { idempotencyKey: 'team_membership_cleanup:trigger', attempt: 1, logger: silentLogger };

  beforeEach(async () => {
    stores = embeddedStores();
    projections = projectionRunnerOver(stores, [teamsProjection]);
    await projections.start();
  });
  afterEach(async () => {
    await projections.stop();
    await stores.dispose();
  });

  const membership = (command: MembershipCommand) => handleCommand(stores.commands, membershipAggregate, membershipStream(T), command, userContext({ tenant_id: T }));
  const team = (teamId: string, command: TeamCommand) => handleCommand(stores.commands, teamAggregate, teamStream(teamId), command, userContext({ tenant_id: T }));
  const teamMembers = async (teamId: string): Promise<string[]> => {
    const events = await stores.eventStore.readStream(teamStream(teamId));
    const last = events.filter((event) => event.type === 'TeamMembersSet').at(-1)!;
    return (last.data as { members: Array<{ user_id: string }> }).members.map((member) => member.user_id);
  };
  const membersSetCount = async (teamId: string): Promise<number> => (await stores.eventStore.readStream(teamStream(teamId))).filter((event) => event.type === 'TeamMembersSet').length;

  async function tenantWithTwoTeams(): Promise<RecordedOf<'MemberRemoved'>> {
    await membership({ type: 'AddMember', data: { tenant_id: T, user_id: 'olga', role: 'owner' } });
    await membership({ type: 'AddMember', data: { tenant_id: T, user_id: 'max', role: 'member' } });
    for (const teamId of ['support', 'sales']) {
      await team(teamId, { type: 'CreateTeam', data: { tenant_id: T, team_id: teamId, name: teamId } });
      await team(teamId, { type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'olga' }, { user_id: 'max', can_write_documents: true }] } });
    }
    await membership({ type: 'RemoveMember', data: { actor_user_id: 'olga', user_id: 'max' } });
    expect(await projections.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
    const [removal] = await stores.events.readStream(membershipStream(T), { direction: 'backwards', maxCount: 1 });
    if (removal?.type !== 'MemberRemoved') throw new Error(`expected MemberRemoved, found ${removal?.type}`);
    return removal;
  }

  it('changes each team once when MemberRemoved is delivered again', async () => {
    const removal = await tenantWithTwoTeams();
    const saga = teamMembershipCleanupSaga({ ...stores.commands, readStore: stores.readStore });
    await saga.handle(removal, context);
    await saga.handle(removal, { ...context, attempt: 2 });
    // Not even the idempotency key is needed: the teams no longer have the member.
    await saga.handle(removal, { ...context, idempotencyKey: 'team_membership_cleanup:a-replay' });
    for (const teamId of ['support', 'sales']) {
      expect(await teamMembers(teamId)).to.deep.equal(['olga']);
      expect(await membersSetCount(teamId)).to.equal(2);
    }
  });

  it('leaves the teams of a member who has joined again by the time the removal is delivered', async () => {
    const removal = await tenantWithTwoTeams();
    await membership({ type: 'AddMember', data: { tenant_id: T, user_id: 'max', role: 'member' } });
    await team('support', { type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'olga' }, { user_id: 'max' }] } });
    expect(await projections.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
    const saga = teamMembershipCleanupSaga({ ...stores.commands, readStore: stores.readStore });
    await saga.handle(removal, context);
    expect(await teamMembers('support')).to.deep.equal(['olga', 'max']);
    expect(await teamMembers('sales')).to.deep.equal(['olga', 'max']);
  });
});
