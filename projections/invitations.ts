// Read model `invitations`: one document per invitation with its tenant, email, role and
// stored status, for the admins' list, the public preview and the lookup of an emailed token
// by its keyed digest (unique). `expired` is not stored: readers compute it from `expires_at`.

import { type InvitationEvent, type InvitationRole, invitationEvents } from '../domain/invitation/invitation';
import type { EventProjection } from './projection';

export interface InvitationDocument {
  id: string;
  tenant_id: string;
  email: string;
  role: InvitationRole;
  status: 'pending' | 'accepted' | 'revoked';
  token_digest: string;
  invited_by: string;
  expires_at: string;
  created_at: string;
  accepted_by: string | null;
  accepted_at: string | null;
  revoked_by: string | null;
  revoked_at: string | null;
  position: number;
  /** Revision of the invitation's stream at the last event applied: its version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export const INVITATIONS = 'invitations';

export const invitationsProjection: EventProjection<InvitationEvent['type']> = {
  name: 'invitations',
  version: 2,
  collections: [
    {
      name: INVITATIONS,
      indexes: [
        { field: 'tenant_id' },
        { field: 'status' },
        { field: 'email' },
        { field: 'token_digest', unique: true },
        { field: 'created_at' },
        { field: 'expires_at' },
      ],
    },
  ],
  handles: invitationEvents.types,
  async apply(event, view) {
    if (event.type === 'InvitationSent') {
      const doc: InvitationDocument = {
        id: event.data.invitation_id,
        tenant_id: event.data.tenant_id,
        email: event.data.email,
        role: event.data.role,
        status: 'pending',
        token_digest: event.data.token_digest,
        invited_by: event.data.invited_by,
        expires_at: event.data.expires_at,
        created_at: event.metadata.occurred_at,
        accepted_by: null,
        accepted_at: null,
        revoked_by: null,
        revoked_at: null,
        position: event.position,
        revision: event.revision,
      };
      view.put(INVITATIONS, doc);
      return;
    }
    const current = await view.get<InvitationDocument>(INVITATIONS, event.data.invitation_id);
    if (!current || current.position >= event.position) return;
    switch (event.type) {
      case 'InvitationAccepted':
        view.patch(INVITATIONS, current.id, { status: 'accepted', accepted_by: event.data.user_id, accepted_at: event.data.accepted_at, position: event.position, revision: event.revision });
        return;
      case 'InvitationRevoked':
        view.patch(INVITATIONS, current.id, { status: 'revoked', revoked_by: event.data.by, revoked_at: event.data.revoked_at, position: event.position, revision: event.revision });
        return;
    }
  },
};
