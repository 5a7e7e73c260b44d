import { type TeamEvent, teamDecider } from '../../domain/team/team';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(teamDecider);
const T = 't1';
const OTHER = 't2';
const ID = 'team-1';

const created: TeamEvent = { type: 'TeamCreated', data: { tenant_id: T, team_id: ID, name: 'Support', description: null, created_at: FIXED_NOW.toISOString() } };
const membersSet = (members: Array<{ user_id: string; can_write_documents: boolean }>): TeamEvent => ({ type: 'TeamMembersSet', data: { tenant_id: T, team_id: ID, members } });
const granted = (workspace_ids: string[]): TeamEvent => ({ type: 'TeamWorkspacesGranted', data: { tenant_id: T, team_id: ID, workspace_ids } });
const deleted: TeamEvent = { type: 'TeamDeleted', data: { tenant_id: T, team_id: ID, name: 'Support' } };
const staffed = [created, membersSet([{ user_id: 'mia', can_write_documents: true }, { user_id: 'max', can_write_documents: false }])];

describe('team decider (spec 4.11)', () => {
  describe('creating', () => {
    it('creates a team with a trimmed name and description (an empty one is null)', () => {
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: '  Support ', description: '  ' } }).then([created]);
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: 'Support', description: ' Helps ' } }).then([
        { type: 'TeamCreated', data: { tenant_id: T, team_id: ID, name: 'Support', description: 'Helps', created_at: FIXED_NOW.toISOString() } },
      ]);
    });

    it('refuses a bad name or description, naming the field', () => {
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: '   ' } }).thenThrows('invalid', 'invalid_request', 'name');
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: 'x'.repeat(101) } }).thenThrows('invalid', 'invalid_request', 'name');
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: 'ok', description: 'd'.repeat(501) } }).thenThrows('invalid', 'invalid_request', 'description');
    });

    it('refuses to create a team twice', () => {
      spec.given([created]).when({ type: 'CreateTeam', data: { tenant_id: T, team_id: ID, name: 'Support' } }).thenThrows('conflict', 'team_exists');
    });
  });

  describe('updating and deleting', () => {
    it('renames and redescribes, recording the previous name; nothing when unchanged', () => {
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: T, name: 'Sales ', description: 'Sells' } }).then([
        { type: 'TeamUpdated', data: { tenant_id: T, team_id: ID, name: 'Sales', description: 'Sells', previous_name: 'Support' } },
      ]);
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: T, name: 'Support' } }).thenNothingHappened();
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: T } }).thenNothingHappened();
    });

    it('clears a description with null and keeps it when absent', () => {
      const described: TeamEvent = { type: 'TeamUpdated', data: { tenant_id: T, team_id: ID, name: 'Support', description: 'Helps', previous_name: 'Support' } };
      spec.given([created, described]).when({ type: 'UpdateTeam', data: { tenant_id: T, description: null } }).then([
        { type: 'TeamUpdated', data: { tenant_id: T, team_id: ID, name: 'Support', description: null, previous_name: 'Support' } },
      ]);
      spec.given([created, described]).when({ type: 'UpdateTeam', data: { tenant_id: T, name: 'Help' } }).then([
        { type: 'TeamUpdated', data: { tenant_id: T, team_id: ID, name: 'Help', description: 'Helps', previous_name: 'Support' } },
      ]);
    });

    it('refuses a bad new name', () => {
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: T, name: '' } }).thenThrows('invalid', 'invalid_request', 'name');
    });

    it('deletes a team, which is then gone for every command', () => {
      spec.given([created]).when({ type: 'DeleteTeam', data: { tenant_id: T } }).then([deleted]);
      spec.given([created, deleted]).when({ type: 'DeleteTeam', data: { tenant_id: T } }).thenThrows('not_found', 'team_not_found');
      spec.given([created, deleted]).when({ type: 'UpdateTeam', data: { tenant_id: T, name: 'Again' } }).thenThrows('not_found', 'team_not_found');
      spec.given([created, deleted]).when({ type: 'GrantWorkspace', data: { tenant_id: T, workspace_id: 'w1' } }).thenThrows('not_found', 'team_not_found');
    });

    it('answers another tenant as if the team did not exist', () => {
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: OTHER, name: 'Mine' } }).thenThrows('not_found', 'team_not_found');
      spec.given([created]).when({ type: 'DeleteTeam', data: { tenant_id: OTHER } }).thenThrows('not_found', 'team_not_found');
      spec.given([created]).when({ type: 'SetGrantedWorkspaces', data: { tenant_id: OTHER, workspace_ids: ['w1'] } }).thenThrows('not_found', 'team_not_found');
      spec.given([]).when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [] } }).thenThrows('not_found', 'team_not_found');
    });
  });

  describe('members and the document write flag', () => {
    it('sets the members, keeping a staying member’s flag when none is given', () => {
      spec.given(staffed).when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'mia' }, { user_id: 'ned', can_write_documents: true }] } }).then([
        membersSet([{ user_id: 'mia', can_write_documents: true }, { user_id: 'ned', can_write_documents: true }]),
      ]);
      spec.given([created]).when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'mia' }] } }).then([membersSet([{ user_id: 'mia', can_write_documents: false }])]);
    });

    it('records nothing when the same members are set again, in any order', () => {
      spec.given(staffed).when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'max' }, { user_id: 'mia', can_write_documents: true }] } }).thenNothingHappened();
    });

    it('refuses a member listed twice, naming the entry', () => {
      spec
        .given([created])
        .when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'mia' }, { user_id: 'max' }, { user_id: 'mia' }] } })
        .thenThrows('invalid', 'duplicate_member', 'members.2.user_id');
    });

    it('sets a member’s write flag, idempotently, and 404s for someone outside the team', () => {
      spec.given(staffed).when({ type: 'SetTeamMemberWriteFlag', data: { tenant_id: T, user_id: 'max', can_write_documents: true } }).then([
        { type: 'TeamMemberWriteFlagSet', data: { tenant_id: T, team_id: ID, user_id: 'max', can_write_documents: true } },
      ]);
      spec.given(staffed).when({ type: 'SetTeamMemberWriteFlag', data: { tenant_id: T, user_id: 'mia', can_write_documents: true } }).thenNothingHappened();
      spec.given(staffed).when({ type: 'SetTeamMemberWriteFlag', data: { tenant_id: T, user_id: 'ned', can_write_documents: true } }).thenThrows('not_found', 'team_member_not_found');
    });

    it('folds the flag into the members', () => {
      const flagged: TeamEvent = { type: 'TeamMemberWriteFlagSet', data: { tenant_id: T, team_id: ID, user_id: 'max', can_write_documents: true } };
      spec.given([...staffed, flagged]).when({ type: 'SetTeamMembers', data: { tenant_id: T, members: [{ user_id: 'max' }] } }).then([membersSet([{ user_id: 'max', can_write_documents: true }])]);
    });
  });

  describe('workspace grants', () => {
    it('replaces the granted workspaces, without duplicates, and records nothing for the same set', () => {
      spec.given([created]).when({ type: 'SetGrantedWorkspaces', data: { tenant_id: T, workspace_ids: ['w1', 'w2', 'w1'] } }).then([granted(['w1', 'w2'])]);
      spec.given([created, granted(['w1', 'w2'])]).when({ type: 'SetGrantedWorkspaces', data: { tenant_id: T, workspace_ids: ['w2', 'w1'] } }).thenNothingHappened();
      spec.given([created, granted(['w1', 'w2'])]).when({ type: 'SetGrantedWorkspaces', data: { tenant_id: T, workspace_ids: [] } }).then([granted([])]);
    });

    it('grants and revokes one workspace, each idempotent, carrying the whole resulting set', () => {
      spec.given([created, granted(['w1'])]).when({ type: 'GrantWorkspace', data: { tenant_id: T, workspace_id: 'w2' } }).then([granted(['w1', 'w2'])]);
      spec.given([created, granted(['w1'])]).when({ type: 'GrantWorkspace', data: { tenant_id: T, workspace_id: 'w1' } }).thenNothingHappened();
      spec.given([created, granted(['w1', 'w2'])]).when({ type: 'RevokeWorkspace', data: { tenant_id: T, workspace_id: 'w1' } }).then([granted(['w2'])]);
      spec.given([created, granted(['w2'])]).when({ type: 'RevokeWorkspace', data: { tenant_id: T, workspace_id: 'w1' } }).thenNothingHappened();
    });

    it('treats a revocation on a deleted team as done, but not one from another tenant', () => {
      spec.given([created, granted(['w1']), deleted]).when({ type: 'RevokeWorkspace', data: { tenant_id: T, workspace_id: 'w1' } }).thenNothingHappened();
      spec.given([created, granted(['w1'])]).when({ type: 'RevokeWorkspace', data: { tenant_id: OTHER, workspace_id: 'w1' } }).thenThrows('not_found', 'team_not_found');
    });
  });
});
