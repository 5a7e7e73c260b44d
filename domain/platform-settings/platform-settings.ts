// The platform settings aggregate: what the super admin decides for the whole platform, such
// as whether anyone may sign up. One stream, `platformSettings-platform`. A setting never
// changed reads as its default, so the stream may not exist at all.
//
// New settings are new optional fields of `PlatformSettingsChanges` with a default in
// `DEFAULT_PLATFORM_SETTINGS`: events written before a field existed still decode.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

/** Every platform setting; a change names only the ones it changes. */
export const PlatformSettingsChanges = t.exact(
  t.partial({
    /** Whether self-service sign-up (the `register` mutation) is open. */
    signup_open: t.boolean,
  }),
  'PlatformSettingsChanges',
);
export type PlatformSettingsChanges = t.TypeOf<typeof PlatformSettingsChanges>;
export type PlatformSettings = Required<PlatformSettingsChanges>;

export const DEFAULT_PLATFORM_SETTINGS: PlatformSettings = { signup_open: true };

export const PlatformSettingsChanged = declareEvent('PlatformSettingsChanged', t.type({ changes: PlatformSettingsChanges }));

export const platformSettingsEvents = eventGroup('platformSettings', [PlatformSettingsChanged]);
export type PlatformSettingsEvent = GroupEvent<typeof platformSettingsEvents>;

export type PlatformSettingsCommand = { type: 'ChangePlatformSettings'; data: { changes: PlatformSettingsChanges } };

export interface PlatformSettingsState {
  settings: PlatformSettings;
}

/** The one stream of the platform's settings. */
export const PLATFORM_SETTINGS_ID = 'platform';
export const platformSettingsStream = (): string => toStreamName(platformSettingsEvents.category, PLATFORM_SETTINGS_ID);

export const platformSettingsDecider: Decider<PlatformSettingsCommand, PlatformSettingsEvent, PlatformSettingsState> = {
  initialState: () => ({ settings: { ...DEFAULT_PLATFORM_SETTINGS } }),
  evolve(state, event) {
    switch (event.type) {
      case 'PlatformSettingsChanged':
        return { settings: { ...state.settings, ...event.data.changes } };
    }
  },
  decide(command, state): Either<DomainError, PlatformSettingsEvent[]> {
    switch (command.type) {
      case 'ChangePlatformSettings': {
        // Only what differs is recorded; the same settings again record nothing.
        const current = state.settings as Record<string, unknown>;
        const changes = Object.fromEntries(Object.entries(command.data.changes).filter(([field, value]) => value !== undefined && current[field] !== value)) as PlatformSettingsChanges;
        return right(Object.keys(changes).length === 0 ? [] : [{ type: 'PlatformSettingsChanged', data: { changes } }]);
      }
    }
  },
};
