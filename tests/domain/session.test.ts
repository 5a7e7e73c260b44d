import { sessionDecider } from '../../domain/session/session';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(sessionDecider);
const started = {
  type: 'SessionStarted' as const,
  data: { jti: 'j1', user_id: 'u1', tenant_id: 't1', audience: 'tenant' as const, issued_at: FIXED_NOW.toISOString(), expires_at: FIXED_NOW.toISOString(), ip: null, user_agent: null },
};

describe('session decider', () => {
  it('starts once and revokes once', () => {
    spec.given([]).when({ type: 'StartSession', data: started.data }).then([started]);
    spec.given([started]).when({ type: 'StartSession', data: started.data }).thenThrows('conflict', 'session_exists');
    const revoked = { type: 'SessionRevoked' as const, data: { jti: 'j1', user_id: 'u1', reason: 'logout', revoked_at: FIXED_NOW.toISOString() } };
    spec.given([started]).when({ type: 'RevokeSession', data: { reason: 'logout' } }).then([revoked]);
    spec.given([started, revoked]).when({ type: 'RevokeSession', data: { reason: 'again' } }).thenNothingHappened();
    spec.given([]).when({ type: 'RevokeSession', data: { reason: 'x' } }).thenThrows('not_found', 'session_not_found');
  });

  it('records an impersonation next to the session an admin opens as a member', () => {
    const impersonating = { ...started.data, impersonated_by: 'root' };
    spec
      .given([])
      .when({ type: 'StartSession', data: impersonating })
      .then([
        { type: 'SessionStarted', data: impersonating },
        { type: 'ImpersonationStarted', data: { jti: 'j1', tenant_id: 't1', user_id: 'u1', admin_id: 'root', expires_at: started.data.expires_at } },
      ]);
    spec.given([]).when({ type: 'StartSession', data: { ...impersonating, tenant_id: null } }).thenThrows('invalid', 'invalid_session');
  });
});
