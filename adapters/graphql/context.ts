import type { GuardedAction } from '../../application/identity/abuse-controls';
import type { IdentityDependencies, LoginFailureBudget, Principal } from '../../application/identity/identity';
import type { RequestContext } from '../../application/shared/request-context';

/** What every resolver gets: the caller (when a token was sent) and the request's context. */
export interface GraphqlContext {
  principal: Principal | null;
  /** Why the token was refused, when one was sent and refused. */
  authError: Error | null;
  request: RequestContext;
  identity: IdentityDependencies;
  /** Spends one attempt of the caller's budget for `action` (per IP, and per email when given). */
  guard(action: GuardedAction, email: string | null): Promise<void>;
  /** The email's budget of failed logins: only failures spend it. */
  loginFailures(email: string): LoginFailureBudget;
}
