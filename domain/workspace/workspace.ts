// The workspace aggregate: a tenant's space for documents, tools and assistants; teams are
// granted access to it. Stream `workspace-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';

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

/** The stored name (NFC, trimmed), or `invalid_name` (domain/shared/text.ts). */
const workspaceName = (name: string): Either<DomainError, string> => checkText('name', name, { max: 100, code: 'invalid_name' });

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
        const name = workspaceName(command.data.name);
        if (name._tag === 'Left') return name;
        return right([{ type: 'WorkspaceCreated', data: { ...command.data, name: name.right, created_at: now.toISOString() } }]);
      }
      case 'RenameWorkspace': {
        if (state.status === 'absent') return left(notFound('workspace_not_found', 'no such workspace'));
        const checked = workspaceName(command.data.name);
        if (checked._tag === 'Left') return checked;
        const name = checked.right;
        if (name === state.name) return right([]);
        return right([{ type: 'WorkspaceRenamed', data: { tenant_id: state.tenant_id, workspace_id: state.workspace_id, name } }]);
      }
    }
  },
};
