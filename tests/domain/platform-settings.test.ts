import { expect } from 'chai';
import { domainEvents } from '../../domain/events';
import { DEFAULT_PLATFORM_SETTINGS, type PlatformSettingsEvent, platformSettingsDecider, platformSettingsStream } from '../../domain/platform-settings/platform-settings';
import { foldEvents } from '../../domain/shared/decider';
import { deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(platformSettingsDecider);
const closed: PlatformSettingsEvent = { type: 'PlatformSettingsChanged', data: { changes: { signup_open: false } } };

describe('platform settings decider', () => {
  it('starts with sign-up open, in its one stream', () => {
    expect(DEFAULT_PLATFORM_SETTINGS).to.deep.equal({ signup_open: true });
    expect(foldEvents(platformSettingsDecider, []).settings.signup_open).to.equal(true);
    expect(platformSettingsStream()).to.equal('platformSettings-platform');
  });

  it('records only the settings that change, and nothing for the same values', () => {
    spec.given([]).when({ type: 'ChangePlatformSettings', data: { changes: { signup_open: false } } }).then([closed]);
    spec.given([closed]).when({ type: 'ChangePlatformSettings', data: { changes: { signup_open: false } } }).thenNothingHappened();
    spec.given([]).when({ type: 'ChangePlatformSettings', data: { changes: { signup_open: true } } }).thenNothingHappened();
    spec.given([closed]).when({ type: 'ChangePlatformSettings', data: { changes: {} } }).thenNothingHappened();
    expect(foldEvents(platformSettingsDecider, [closed]).settings.signup_open).to.equal(false);
  });

  it('reads a change with a setting it does not know yet, keeping the ones it knows', () => {
    const decoded = domainEvents.decode('PlatformSettingsChanged', { changes: { signup_open: false, default_plan_code: 'starter' } }, 1);
    expect(decoded.ok && decoded.event.data).to.deep.equal({ changes: { signup_open: false } });
  });
});
