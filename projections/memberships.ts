// Read model `memberships`: one document per (tenant, user) with role and status, for member
// lists, "my tenants", and the per-request check that a token's member is still active.

import { MembershipEvent } from '../domain/membership/membership';
import type { Projection } from './projection';

export interface MembershipDocument {
  id: string;
  tenant_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
  status: 'active' | 'disabled';
  joined_at: string;
  position: number;
  [field: string]: unknown;
}

export const MEMBERSHIPS = 'memberships';
export const membershipId = (tenantId: string, userId: string): string => `${tenantId}:${userId}`;

export const membershipsProjection: Projection = {
  name: 'memberships',
  version: 1,
  collections: [{ name: MEMBERSHIPS, indexes: [{ field: 'tenant_id' }, { field: 'user_id' }, { field: 'joined_at' }, { field: 'role' }, { field: 'status' }] }],
  handles: MembershipEvent.types.map((codec) => codec.props.type.value),
  async apply(recorded, view) {
    const event = { type: recorded.type, data: recorded.data } as MembershipEvent;
    const patchRole = async (userId: string, role: MembershipDocument['role']): Promise<void> => {
      const id = membershipId(event.data.tenant_id, userId);
      if (await view.get(MEMBERSHIPS, id)) view.patch(MEMBERSHIPS, id, { role, position: recorded.position });
    };
    switch (event.type) {
      case 'MemberJoined': {
        const doc: MembershipDocument = {
          id: membershipId(event.data.tenant_id, event.data.user_id),
          tenant_id: event.data.tenant_id,
          user_id: event.data.user_id,
          role: event.data.role,
          status: 'active',
          joined_at: event.data.joined_at,
          position: recorded.position,
        };
        view.put(MEMBERSHIPS, doc);
        return;
      }
      case 'MemberRoleChanged':
        await patchRole(event.data.user_id, event.data.role);
        return;
      case 'MemberStatusChanged': {
        const id = membershipId(event.data.tenant_id, event.data.user_id);
        if (await view.get(MEMBERSHIPS, id)) view.patch(MEMBERSHIPS, id, { status: event.data.status, position: recorded.position });
        return;
      }
      case 'MemberRemoved':
        view.delete(MEMBERSHIPS, membershipId(event.data.tenant_id, event.data.user_id));
        return;
      case 'OwnershipTransferred':
        await patchRole(event.data.from_user_id, 'admin');
        await patchRole(event.data.to_user_id, 'owner');
        return;
    }
  },
};
