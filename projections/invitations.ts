// Read model `invitations`: one document per invitation with its tenant, email, role and
// stored status, for the admins' list, the public preview and the lookup of an emailed token
// by its keyed digest (unique). `expired` is not stored: readers compute it from `expires_at`.
// An erased invitation leaves it (InvitationErased).

import { type InvitationEvent, type InvitationRole, invitationEvents } from '../domain/invitation/invitation';
import { documentProjection } from './document-projection';

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

export const invitationsProjection = documentProjection<InvitationEvent['type'], InvitationDocument>({
  name: 'invitations',
  // 3: erased invitations dropped; `accepted_by` indexed (an account's closure finds the invitations it accepted).
  version: 3,
  collection: {
    name: INVITATIONS,
    indexes: [
      { field: 'tenant_id' },
      { field: 'status' },
      { field: 'email' },
      { field: 'token_digest', unique: true },
      { field: 'created_at' },
      { field: 'expires_at' },
      { field: 'accepted_by' },
    ],
  },
  handles: invitationEvents.types,
  documentId: (event) => event.data.invitation_id,
  evolve(current, event) {
    if (event.type === 'InvitationSent') {
      const { invitation_id, tenant_id, email, role, token_digest, invited_by, expires_at } = event.data;
      return {
        id: invitation_id,
        tenant_id,
        email,
        role,
        status: 'pending',
        token_digest,
        invited_by,
        expires_at,
        created_at: event.metadata.occurred_at,
        accepted_by: null,
        accepted_at: null,
        revoked_by: null,
        revoked_at: null,
        revision: event.revision,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'InvitationAccepted':
        return { ...current, status: 'accepted', accepted_by: event.data.user_id, accepted_at: event.data.accepted_at, revision: event.revision };
      case 'InvitationRevoked':
        return { ...current, status: 'revoked', revoked_by: event.data.by, revoked_at: event.data.revoked_at, revision: event.revision };
      case 'InvitationErased':
        return null;
    }
  },
});
