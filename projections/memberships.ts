// Read model `memberships`: one document per (tenant, user) with role and status, for member
// lists, "my tenants", and the per-request check that a token's member is still active.
//
// Each document also carries the member's email and name, so a member list is one query.
// The projection keeps its own copy of those (`member_profiles`, from UserRegistered, with
// the user's memberships), so it never reads another projection's collections, whichever
// of the two events comes first. A closed account (UserAccountClosed) takes its email and name
// out of both at once.

import { type MembershipEvent, membershipEvents } from '../domain/membership/membership';
import type { EventProjection, ProjectionView } from './projection';

export interface MembershipDocument {
  id: string;
  tenant_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
  status: 'active' | 'disabled';
  joined_at: string;
  email: string | null;
  name: string | null;
  position: number;
  /**
   * Revision of the tenant's membership stream at the last event that changed this member:
   * the member's version (ETag). The stream is the whole roster, so other members' changes
   * leave it alone.
   */
  revision: number;
  [field: string]: unknown;
}

/** Private to this projection. */
interface MemberProfileDocument {
  id: string;
  email: string | null;
  name: string | null;
  membership_ids: string[];
  [field: string]: unknown;
}

export const MEMBERSHIPS = 'memberships';
const MEMBER_PROFILES = 'member_profiles';
export const membershipId = (tenantId: string, userId: string): string => `${tenantId}:${userId}`;

const emptyProfile = (userId: string): MemberProfileDocument => ({ id: userId, email: null, name: null, membership_ids: [] });

async function profileOf(view: ProjectionView, userId: string): Promise<MemberProfileDocument> {
  return (await view.get<MemberProfileDocument>(MEMBER_PROFILES, userId)) ?? emptyProfile(userId);
}

export const membershipsProjection: EventProjection<MembershipEvent['type'] | 'UserRegistered' | 'UserAccountClosed'> = {
  name: 'memberships',
  version: 3,
  collections: [
    { name: MEMBERSHIPS, indexes: [{ field: 'tenant_id' }, { field: 'user_id' }, { field: 'joined_at' }, { field: 'role' }, { field: 'status' }] },
    { name: MEMBER_PROFILES },
  ],
  handles: [...membershipEvents.types, 'UserRegistered', 'UserAccountClosed'],
  async apply(event, view) {
    if (event.type === 'UserAccountClosed') {
      // The person's email and name go; the memberships they are leaving show none until they are removed.
      const profile = await view.get<MemberProfileDocument>(MEMBER_PROFILES, event.data.user_id);
      if (!profile) return;
      for (const id of profile.membership_ids) view.patch(MEMBERSHIPS, id, { email: null, name: null });
      view.delete(MEMBER_PROFILES, profile.id);
      return;
    }
    if (event.type === 'UserRegistered') {
      const { user_id, email, name } = event.data;
      const profile = await profileOf(view, user_id);
      view.put(MEMBER_PROFILES, { ...profile, email, name });
      for (const id of profile.membership_ids) view.patch(MEMBERSHIPS, id, { email, name });
      return;
    }
    /** The membership of `userId` when this event is news to it (not applied already). */
    const membershipToChange = async (userId: string): Promise<MembershipDocument | null> => {
      const current = await view.get<MembershipDocument>(MEMBERSHIPS, membershipId(event.data.tenant_id, userId));
      return current && current.position < event.position ? current : null;
    };
    const patchRole = async (userId: string, role: MembershipDocument['role']): Promise<void> => {
      const current = await membershipToChange(userId);
      if (current) view.patch(MEMBERSHIPS, current.id, { role, position: event.position, revision: event.revision });
    };
    switch (event.type) {
      case 'MemberJoined': {
        const existing = await view.get<MembershipDocument>(MEMBERSHIPS, membershipId(event.data.tenant_id, event.data.user_id));
        if (existing && existing.position >= event.position) return;
        const profile = await profileOf(view, event.data.user_id);
        const doc: MembershipDocument = {
          id: membershipId(event.data.tenant_id, event.data.user_id),
          tenant_id: event.data.tenant_id,
          user_id: event.data.user_id,
          role: event.data.role,
          status: 'active',
          joined_at: event.data.joined_at,
          email: profile.email,
          name: profile.name,
          position: event.position,
          revision: event.revision,
        };
        view.put(MEMBERSHIPS, doc);
        if (!profile.membership_ids.includes(doc.id)) view.put(MEMBER_PROFILES, { ...profile, membership_ids: [...profile.membership_ids, doc.id] });
        return;
      }
      case 'MemberRoleChanged':
        await patchRole(event.data.user_id, event.data.role);
        return;
      case 'MemberStatusChanged': {
        const current = await membershipToChange(event.data.user_id);
        if (current) view.patch(MEMBERSHIPS, current.id, { status: event.data.status, position: event.position, revision: event.revision });
        return;
      }
      case 'MemberRemoved': {
        const id = membershipId(event.data.tenant_id, event.data.user_id);
        view.delete(MEMBERSHIPS, id);
        const profile = await profileOf(view, event.data.user_id);
        view.put(MEMBER_PROFILES, { ...profile, membership_ids: profile.membership_ids.filter((known) => known !== id) });
        return;
      }
      case 'OwnershipTransferred':
        await patchRole(event.data.from_user_id, 'admin');
        await patchRole(event.data.to_user_id, 'owner');
        return;
    }
  },
};
