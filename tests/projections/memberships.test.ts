// The memberships read model carries each member's email and name, from whichever of the
// user's registration and the membership comes first.

import { expect } from 'chai';
import { MEMBERSHIPS, type MembershipDocument, membershipId, membershipsProjection } from '../../projections/memberships';
import { newEvent } from '../support/events';
import { runningProjections } from '../support/stores';

describe('memberships projection', () => {
  const running = runningProjections([membershipsProjection]);

  const registered = (userId: string, email: string) =>
    newEvent('UserRegistered', { user_id: userId, email, name: email.split('@')[0], password_hash: 'x', registered_at: '2026-01-01T00:00:00.000Z' });
  const joined = (tenantId: string, userId: string) => newEvent('MemberJoined', { tenant_id: tenantId, user_id: userId, role: 'member', joined_at: '2026-01-02T00:00:00.000Z' });
  const removed = (tenantId: string, userId: string) => newEvent('MemberRemoved', { tenant_id: tenantId, user_id: userId, reason: 'removed' });

  const membership = async (tenantId: string, userId: string) =>
    running.stores.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, userId));

  const settle = async () => {
    expect(await running.caughtUp()).to.equal(true);
  };

  it('copies the email and name of a registered user onto each of their memberships', async () => {
    await running.stores.eventStore.appendToStream('user-u1', [registered('u1', 'ada@example.com')]);
    await running.stores.eventStore.appendToStream('membership-t1', [joined('t1', 'u1')]);
    await running.stores.eventStore.appendToStream('membership-t2', [joined('t2', 'u1')]);
    await settle();
    expect(await membership('t1', 'u1')).to.deep.include({ email: 'ada@example.com', name: 'ada', role: 'member', status: 'active' });
    expect(await membership('t2', 'u1')).to.deep.include({ email: 'ada@example.com', name: 'ada' });
  });

  it('fills them in when the registration comes after the membership', async () => {
    await running.stores.eventStore.appendToStream('membership-t1', [joined('t1', 'u2')]);
    await settle();
    expect(await membership('t1', 'u2')).to.deep.include({ email: null, name: null });
    await running.stores.eventStore.appendToStream('user-u2', [registered('u2', 'bob@example.com')]);
    await settle();
    expect(await membership('t1', 'u2')).to.deep.include({ email: 'bob@example.com', name: 'bob' });
  });

  it('forgets a removed membership, and a later registration does not bring it back', async () => {
    await running.stores.eventStore.appendToStream('membership-t1', [joined('t1', 'u3'), removed('t1', 'u3')]);
    await running.stores.eventStore.appendToStream('user-u3', [registered('u3', 'cy@example.com')]);
    await settle();
    expect(await membership('t1', 'u3')).to.equal(null);
  });
});
