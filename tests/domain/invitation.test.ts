import { expect } from 'chai';
import { INVITATION_TTL_SECONDS, type InvitationCommand, type InvitationEvent, invitationDecider, invitationStatusAt } from '../../domain/invitation/invitation';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(invitationDecider);
const EXPIRES_AT = new Date(FIXED_NOW.getTime() + INVITATION_TTL_SECONDS * 1000).toISOString();
const afterExpiry = deciderSpec(invitationDecider, new Date(Date.parse(EXPIRES_AT)));

const sent: InvitationEvent = {
  type: 'InvitationSent',
  data: { tenant_id: 't1', invitation_id: 'i1', email: 'new@example.com', role: 'member', token_digest: 'digest', invited_by: 'olga', expires_at: EXPIRES_AT },
};
const accepted: InvitationEvent = { type: 'InvitationAccepted', data: { invitation_id: 'i1', user_id: 'u1', accepted_at: FIXED_NOW.toISOString() } };
const revoked: InvitationEvent = { type: 'InvitationRevoked', data: { invitation_id: 'i1', by: 'olga', revoked_at: FIXED_NOW.toISOString() } };

type SendData = Extract<InvitationCommand, { type: 'SendInvitation' }>['data'];
const send = (overrides: Partial<SendData> = {}): InvitationCommand => ({
  type: 'SendInvitation',
  data: { tenant_id: 't1', invitation_id: 'i1', email: 'new@example.com', role: 'member', token_digest: 'digest', invited_by: 'olga', ...overrides },
});

describe('invitation decider (spec 4.10)', () => {
  describe('sending', () => {
    it('records the invitation with a normalized email and an expiry of INVITATION_TTL_SECONDS, seven days by default', () => {
      expect(INVITATION_TTL_SECONDS).to.equal(7 * 24 * 3600);
      spec.given([]).when(send({ email: ' New@Example.COM ' })).then([sent]);
    });

    it('refuses a bad email, an owner role and a second send on the same stream', () => {
      spec.given([]).when(send({ email: 'nope' })).thenThrows('invalid', 'invalid_email', 'email');
      spec
        .given([])
        .when(send({ role: 'owner' as SendData['role'] }))
        .thenThrows('invalid', 'invalid_role', 'role');
      spec.given([sent]).when(send()).thenThrows('conflict', 'invitation_exists');
    });

    it('lets only the super admin invite an owner', () => {
      spec
        .given([])
        .when(send({ role: 'owner', invited_by: 'root', by_platform_admin: true }))
        .then([{ type: 'InvitationSent', data: { ...sent.data, role: 'owner', invited_by: 'root' } } as InvitationEvent]);
      spec.given([]).when(send({ role: 'owner', by_platform_admin: false })).thenThrows('invalid', 'invalid_role', 'role');
      spec.given([]).when(send({ role: 'admin', invited_by: 'root', by_platform_admin: true })).then([{ type: 'InvitationSent', data: { ...sent.data, role: 'admin', invited_by: 'root' } } as InvitationEvent]);
    });
  });

  describe('accepting', () => {
    it('accepts a pending invitation for the invited email, whatever its case', () => {
      spec.given([sent]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'NEW@example.com' } }).then([accepted]);
    });

    it('refuses another email, an unknown invitation, a used one and a revoked one', () => {
      spec.given([sent]).when({ type: 'AcceptInvitation', data: { user_id: 'u2', email: 'other@example.com' } }).thenThrows('forbidden', 'invitation_email_mismatch');
      spec.given([]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } }).thenThrows('not_found', 'invitation_not_found');
      spec.given([sent, accepted]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } }).thenThrows('conflict', 'invitation_already_accepted');
      spec.given([sent, revoked]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } }).thenThrows('conflict', 'invitation_revoked');
    });

    it('refuses an expired invitation from the moment of expiry, decided against now', () => {
      deciderSpec(invitationDecider, new Date(Date.parse(EXPIRES_AT) - 1))
        .given([sent])
        .when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } })
        .then([{ ...accepted, data: { ...accepted.data, accepted_at: new Date(Date.parse(EXPIRES_AT) - 1).toISOString() } }]);
      afterExpiry.given([sent]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } }).thenThrows('gone', 'invitation_expired');
    });
  });

  describe('revoking', () => {
    it('revokes a pending invitation of the revoker’s tenant', () => {
      spec.given([sent]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).then([revoked]);
    });

    it('hides another tenant’s invitation and refuses anything not pending', () => {
      spec.given([sent]).when({ type: 'RevokeInvitation', data: { tenant_id: 't2', by: 'eve' } }).thenThrows('not_found', 'invitation_not_found');
      spec.given([]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).thenThrows('not_found', 'invitation_not_found');
      spec.given([sent, accepted]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).thenThrows('conflict', 'invitation_not_pending');
      spec.given([sent, revoked]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).thenThrows('conflict', 'invitation_not_pending');
      afterExpiry.given([sent]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).thenThrows('conflict', 'invitation_not_pending');
    });
  });

  describe('erasing', () => {
    const erase = (tenantId = 't1'): InvitationCommand => ({ type: 'EraseInvitation', data: { tenant_id: tenantId, erased_by: { kind: 'user', id: 'olga' } } });
    const erased: InvitationEvent = { type: 'InvitationErased', data: { invitation_id: 'i1', tenant_id: 't1', erased_by: { kind: 'user', id: 'olga' }, erased_at: FIXED_NOW.toISOString() } };

    it('erases an invitation of the eraser’s tenant whatever its status, expired included', () => {
      spec.given([sent]).when(erase()).then([erased]);
      spec.given([sent, accepted]).when(erase()).then([erased]);
      spec.given([sent, revoked]).when(erase()).then([erased]);
      afterExpiry.given([sent]).when(erase()).then([{ ...erased, data: { ...erased.data, erased_at: EXPIRES_AT } }]);
    });

    it('records nothing for an erased one, and hides an unknown one and another tenant’s', () => {
      spec.given([sent, erased]).when(erase()).thenNothingHappened();
      spec.given([]).when(erase()).thenThrows('not_found', 'invitation_not_found');
      spec.given([sent]).when(erase('t2')).thenThrows('not_found', 'invitation_not_found');
    });

    it('makes it unknown to acceptance and revocation', () => {
      spec.given([sent, erased]).when({ type: 'AcceptInvitation', data: { user_id: 'u1', email: 'new@example.com' } }).thenThrows('not_found', 'invitation_not_found');
      spec.given([sent, erased]).when({ type: 'RevokeInvitation', data: { tenant_id: 't1', by: 'olga' } }).thenThrows('not_found', 'invitation_not_found');
    });
  });

  it('reads a pending invitation past its expiry as expired', () => {
    expect(invitationStatusAt('pending', EXPIRES_AT, FIXED_NOW)).to.equal('pending');
    expect(invitationStatusAt('pending', EXPIRES_AT, new Date(EXPIRES_AT))).to.equal('expired');
    expect(invitationStatusAt('accepted', EXPIRES_AT, new Date(EXPIRES_AT))).to.equal('accepted');
    expect(invitationStatusAt('revoked', EXPIRES_AT, new Date(EXPIRES_AT))).to.equal('revoked');
  });
});
