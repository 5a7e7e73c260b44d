// Every port the use cases use, as the composition root wires them. Adapters hold this and
// pass it on; each use case declares only the part of it that it uses.

import type { CommandDependencies } from '../command-handling/handle-command';
import type { PasswordHasher, Secrets, TokenService } from '../ports/identity';
import type { PersonalDataVault } from '../ports/personal-data';
import type { ReadStore } from '../ports/read-store';

export interface UseCaseSettings {
  tokenTtlSeconds: number;
  otpTtlSeconds: number;
  /** How long an Idempotency-Key's answer is kept for retries (IDEMPOTENCY_KEY_TTL_SECONDS). */
  idempotencyKeyTtlSeconds: number;
  /** How long a sign-up may take before it is finished or released (REGISTRATION_TIMEOUT_SECONDS). */
  registrationTimeoutSeconds: number;
  /** How long a super admin's impersonation token lasts (IMPERSONATION_TTL_SECONDS, at most an hour). */
  impersonationTtlSeconds: number;
}

export interface UseCaseDependencies extends CommandDependencies {
  readStore: ReadStore;
  secrets: Secrets;
  /** The keys of personal data (the store seals and opens with it; erasures delete from it). */
  personalData: PersonalDataVault;
  passwords: PasswordHasher;
  tokens: TokenService;
  settings: UseCaseSettings;
  /** Waits until the read models have passed a write's position (read-your-writes). */
  readYourWrites(position: number | null): Promise<boolean>;
}
