// The handoff configuration of a tenant (spec 4.8): the webhook where the platform posts a
// conversation that a person takes over (the tenant's helpdesk), the secret it signs those
// posts with (spec 5.2, as connector requests are signed), and whether handoffs are sent.
// One stream per tenant, `handoffConfig-<tenant id>`.
//
// The secret only ever enters an event sealed; its last four characters are kept in clear as
// a hint, so a person can tell which secret a receiver must have. The decider never sees the
// secret itself: the application seals it (and makes one when there is none) before the
// command. Whether the platform may call a URL at all (https, no private address) depends on
// the deployment and on name resolution: the application checks that; this checks its form.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { endpointUrlProblem } from '../shared/endpoint-url';
import { toStreamName } from '../shared/stream-names';

/** Where this configuration's secret came from: kept from before, given by the person, or made by the platform. */
export const SecretSource = t.keyof({ kept: null, given: null, generated: null });
export type SecretSource = t.TypeOf<typeof SecretSource>;

export const HandoffConfigured = declareEvent(
  'HandoffConfigured',
  t.type({
    tenant_id: t.string,
    url: t.string,
    enabled: t.boolean,
    /** The signing secret, sealed (never in clear in an event). */
    secret_sealed: t.string,
    /** Its last four characters. */
    secret_hint: t.string,
    secret_source: SecretSource,
    configured_at: t.string,
  }),
);

export const handoffConfigEvents = eventGroup('handoffConfig', [HandoffConfigured]);
export type HandoffConfigEvent = GroupEvent<typeof handoffConfigEvents>;

/** A sealed secret and its hint. */
export interface SealedSecret {
  sealed: string;
  hint: string;
}

/**
 * Which secret the configuration signs with: one the person gave, a new one the platform made
 * (an empty secret asks for that: rotation), or the current one, with a new one the platform
 * made for the case that there is none yet.
 */
export type SecretChoice = ({ kind: 'given' } & SealedSecret) | ({ kind: 'generate' } & SealedSecret) | { kind: 'keep'; otherwise: SealedSecret };

/** `enabled` null keeps what is configured (on, for a first configuration). */
export type HandoffConfigCommand = { type: 'ConfigureHandoff'; data: { tenant_id: string; url: string; enabled: boolean | null; secret: SecretChoice } };

export type HandoffConfigState =
  | { status: 'absent' }
  | { status: 'configured'; tenant_id: string; url: string; enabled: boolean; secret_sealed: string; secret_hint: string; configured_at: string };

export const handoffConfigStream = (tenantId: string): string => toStreamName(handoffConfigEvents.category, tenantId);

export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;

const SECRET_CHARACTERS = /^[\x21-\x7e]+$/;

/** Why a signing secret given by a person is refused, or null: 16 to 256 printable ASCII characters, no spaces. */
export function signingSecretProblem(secret: string, field = 'secret'): DomainError | null {
  if (secret.length < MIN_SECRET_LENGTH || secret.length > MAX_SECRET_LENGTH) {
    return invalid('invalid_secret', `${field}: expected ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters (or an empty string, for the platform to make one)`, field);
  }
  if (!SECRET_CHARACTERS.test(secret)) return invalid('invalid_secret', `${field}: expected printable ASCII characters without spaces`, field);
  return null;
}

/** The clear hint of a secret: its last four characters. */
export const secretHint = (secret: string): string => secret.slice(-4);

export const handoffConfigDecider: Decider<HandoffConfigCommand, HandoffConfigEvent, HandoffConfigState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'HandoffConfigured': {
        const { tenant_id, url, enabled, secret_sealed, secret_hint, configured_at } = event.data;
        return { status: 'configured', tenant_id, url, enabled, secret_sealed, secret_hint, configured_at };
      }
    }
  },
  decide(command, state, { now }): Either<DomainError, HandoffConfigEvent[]> {
    switch (command.type) {
      case 'ConfigureHandoff': {
        const { tenant_id, url, secret } = command.data;
        const problem = endpointUrlProblem(url);
        if (problem) return left(problem);
        const current = state.status === 'configured' ? state : null;
        const enabled = command.data.enabled ?? current?.enabled ?? true;
        const chosen: { sealed: string; hint: string; source: SecretSource } =
          secret.kind === 'given'
            ? { sealed: secret.sealed, hint: secret.hint, source: 'given' }
            : secret.kind === 'generate'
              ? { sealed: secret.sealed, hint: secret.hint, source: 'generated' }
              : current
                ? { sealed: current.secret_sealed, hint: current.secret_hint, source: 'kept' }
                : { ...secret.otherwise, source: 'generated' };
        // The same configuration again records nothing (a given secret is taken as new: sealed
        // values differ each time, so the decider cannot tell whether it is the same one).
        if (current && chosen.source === 'kept' && current.url === url && current.enabled === enabled) return right([]);
        return right([
          {
            type: 'HandoffConfigured',
            data: { tenant_id, url, enabled, secret_sealed: chosen.sealed, secret_hint: chosen.hint, secret_source: chosen.source, configured_at: now.toISOString() },
          },
        ]);
      }
    }
  },
};
