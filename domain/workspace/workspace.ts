// The workspace aggregate: a tenant's space for documents, tools and assistants; teams are
// granted access to it. Stream `workspace-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const WorkspaceCreated = declareEvent(
  'WorkspaceCreated',
  t.type({ tenant_id: t.string, workspace_id: t.string, name: t.string, is_default: t.boolean, created_at: t.string }),
);
export const WorkspaceRenamed = declareEvent('WorkspaceRenamed', t.type({ tenant_id: t.string, workspace_id: t.string, name: t.string }));
export const workspaceEvents = eventGroup('workspace', [WorkspaceCreated, WorkspaceRenamed]);
export type WorkspaceEvent = GroupEvent<typeof workspaceEvents>;

export type WorkspaceCommand =
  | { type: 'CreateWorkspace'; data: { tenant_id: string; workspace_id: string; name: string; is_default: boolean } }
  | { type: 'RenameWorkspace'; data: { name: string } };

export type WorkspaceState = { status: 'absent' } | { status: 'active'; tenant_id: string; workspace_id: string; name: string };

export const workspaceStream = (workspaceId: string): string => toStreamName(workspaceEvents.category, workspaceId);

function workspaceNameProblem(name: string): DomainError | null {
  const trimmed = name.trim();
  return trimmed.length === 0 || trimmed.length > 100 ? invalid('invalid_name', 'name must be 1 to 100 characters', 'name') : null;
}

export const workspaceDecider: Decider<WorkspaceCommand, WorkspaceEvent, WorkspaceState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'WorkspaceCreated':
        return { status: 'active', tenant_id: event.data.tenant_id, workspace_id: event.data.workspace_id, name: event.data.name };
      case 'WorkspaceRenamed':
        return state.status === 'absent' ? state : { ...state, name: event.data.name };
    }
  },
  decide(command, state, { now }): Either<DomainError, WorkspaceEvent[]> {
    switch (command.type) {
      case 'CreateWorkspace': {
        if (state.status !== 'absent') return left(conflict('workspace_exists', 'the workspace already exists'));
        const problem = workspaceNameProblem(command.data.name);
        if (problem) return left(problem);
        return right([{ type: 'WorkspaceCreated', data: { ...command.data, name: command.data.name.trim(), created_at: now.toISOString() } }]);
      }
      case 'RenameWorkspace': {
        if (state.status === 'absent') return left(notFound('workspace_not_found', 'no such workspace'));
        const problem = workspaceNameProblem(command.data.name);
        if (problem) return left(problem);
        const name = command.data.name.trim();
        if (name === state.name) return right([]);
        return right([{ type: 'WorkspaceRenamed', data: { tenant_id: state.tenant_id, workspace_id: state.workspace_id, name } }]);
      }
    }
  },
};
