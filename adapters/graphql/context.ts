import type { GuardedAction } from '../../application/user/abuse-controls';
import type { PasswordGuard } from '../../application/user/account-closure';
import type { Logger } from '../../application/ports/logger';
import type { UseCaseDependencies } from '../../application/shared/dependencies';
import type { LoginFailureBudget } from '../../application/session/login';
import type { Principal } from '../../application/session/sessions';
import type { RequestContext } from '../../application/shared/request-context';

/** What every resolver gets: the caller (when a token was sent) and the request's context. */
export interface GraphqlContext {
  principal: Principal | null;
  /** Why the token was refused, when one was sent and refused. */
  authError: Error | null;
  request: RequestContext;
  identity: UseCaseDependencies;
  /** Spends one attempt of the caller's budget for `action` (per IP, and per email when given). */
  guard(action: GuardedAction, email: string | null): Promise<void>;
  /** The email's budget of failed logins: only failures spend it. */
  loginFailures(email: string): LoginFailureBudget;
  /** What guards an account closure's password check against guessing. */
  passwordGuard: PasswordGuard;
  /** The request's logger. */
  logger: Logger;
}
