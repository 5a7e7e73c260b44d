import { expect } from 'chai';
import type { TenantCommand } from '../../domain/tenant/commands';
import type { TenantEvent } from '../../domain/tenant/events';
import { slugFromName, slugProblem } from '../../domain/tenant/slug';
import { DEFAULT_TENANT_SETTINGS, tenantDecider } from '../../domain/tenant/tenant';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(tenantDecider);
const created: TenantEvent = {
  type: 'TenantCreated',
  data: { tenant_id: 't1', name: 'Acme', slug: 'acme', branding: {}, settings: DEFAULT_TENANT_SETTINGS, created_at: FIXED_NOW.toISOString() },
};
const suspended: TenantEvent = { type: 'TenantSuspended', data: { tenant_id: 't1', reason: 'unpaid', suspended_at: FIXED_NOW.toISOString() } };

describe('tenant decider', () => {
  describe('CreateTenant', () => {
    it('creates a tenant with default settings', () => {
      spec.given([]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: ' Acme ', slug: 'acme' } }).then([created]);
    });

    it('keeps given settings over the defaults', () => {
      spec
        .given([])
        .when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'acme', settings: { timezone: 'Europe/Paris' } } })
        .then([{ ...created, data: { ...created.data, settings: { ...DEFAULT_TENANT_SETTINGS, timezone: 'Europe/Paris' } } } as TenantEvent]);
    });

    it('refuses a second creation', () => {
      spec.given([created]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'acme' } }).thenThrows('conflict', 'tenant_exists');
    });

    it('refuses an empty name, a bad slug and a bad colour, naming the field', () => {
      spec.given([]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: '  ', slug: 'acme' } }).thenThrows('invalid', 'invalid_name', 'name');
      spec.given([]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'Acme!' } }).thenThrows('invalid', 'invalid_slug', 'slug');
      spec
        .given([])
        .when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'acme', branding: { primary_color: 'red' } } })
        .thenThrows('invalid', 'invalid_branding', 'primary_color');
    });
  });

  describe('RenameTenant', () => {
    it('renames, remembering the previous name', () => {
      spec.given([created]).when({ type: 'RenameTenant', data: { name: 'Acme Corp' } }).then([
        { type: 'TenantRenamed', data: { tenant_id: 't1', name: 'Acme Corp', previous_name: 'Acme' } },
      ]);
    });

    it('records nothing when the name does not change', () => {
      spec.given([created]).when({ type: 'RenameTenant', data: { name: 'Acme' } }).thenNothingHappened();
    });

    it('is not found before creation', () => {
      spec.given([]).when({ type: 'RenameTenant', data: { name: 'X' } }).thenThrows('not_found', 'tenant_not_found');
    });
  });

  describe('branding and settings', () => {
    it('records only the fields that change', () => {
      spec
        .given([created])
        .when({ type: 'ChangeTenantSettings', data: { changes: { timezone: 'UTC', default_language: 'fr' } } })
        .then([{ type: 'TenantSettingsChanged', data: { tenant_id: 't1', changes: { default_language: 'fr' } } }]);
      spec
        .given([created])
        .when({ type: 'ChangeTenantBranding', data: { changes: { primary_color: '#112233' } } })
        .then([{ type: 'TenantBrandingChanged', data: { tenant_id: 't1', changes: { primary_color: '#112233' } } }]);
    });

    it('refuses an http logo and a bad language tag', () => {
      spec.given([created]).when({ type: 'ChangeTenantBranding', data: { changes: { logo_url: 'http://x/logo.png' } } }).thenThrows('invalid', 'invalid_branding', 'logo_url');
      spec.given([created]).when({ type: 'ChangeTenantSettings', data: { changes: { default_language: 'english' } } }).thenThrows('invalid', 'invalid_settings', 'default_language');
    });

    it('keeps its orchestration payloads a whole number of days from 1 to 3650, when it sets one', () => {
      spec
        .given([created])
        .when({ type: 'ChangeTenantSettings', data: { changes: { orchestration_payload_retention_days: 7 } } })
        .then([{ type: 'TenantSettingsChanged', data: { tenant_id: 't1', changes: { orchestration_payload_retention_days: 7 } } }]);
      for (const days of [0, -1, 1.5, 3651, Number.NaN]) {
        spec.given([created]).when({ type: 'ChangeTenantSettings', data: { changes: { orchestration_payload_retention_days: days } } }).thenThrows('invalid', 'invalid_settings', 'orchestration_payload_retention_days');
      }
    });
  });

  describe('suspension', () => {
    it('suspends an active tenant and unsuspends a suspended one', () => {
      spec.given([created]).when({ type: 'SuspendTenant', data: { reason: 'unpaid' } }).then([suspended]);
      spec.given([created, suspended]).when({ type: 'UnsuspendTenant', data: {} }).then([
        { type: 'TenantUnsuspended', data: { tenant_id: 't1', unsuspended_at: FIXED_NOW.toISOString() } },
      ]);
    });

    it('refuses to suspend twice or unsuspend an active tenant', () => {
      spec.given([created, suspended]).when({ type: 'SuspendTenant', data: { reason: 'again' } }).thenThrows('conflict', 'tenant_suspended');
      spec.given([created]).when({ type: 'UnsuspendTenant', data: {} }).thenThrows('conflict', 'tenant_not_suspended');
    });

    it('keeps the reason trimmed, and refuses an empty or multi-line one', () => {
      spec.given([created]).when({ type: 'SuspendTenant', data: { reason: '  unpaid ' } }).then([suspended]);
      spec.given([created]).when({ type: 'SuspendTenant', data: { reason: '   ' } }).thenThrows('invalid', 'invalid_reason', 'reason');
      spec.given([created]).when({ type: 'SuspendTenant', data: { reason: 'one\ntwo' } }).thenThrows('invalid', 'invalid_reason', 'reason');
    });
  });

  describe('UpdateTenant (the super admin’s edit)', () => {
    it('records a rename, a branding change and a settings change together, only what differs', () => {
      spec
        .given([created])
        .when({ type: 'UpdateTenant', data: { name: 'Acme Corp', branding: { primary_color: '#112233' }, settings: { timezone: 'UTC', default_language: 'fr' } } })
        .then([
          { type: 'TenantRenamed', data: { tenant_id: 't1', name: 'Acme Corp', previous_name: 'Acme' } },
          { type: 'TenantBrandingChanged', data: { tenant_id: 't1', changes: { primary_color: '#112233' } } },
          { type: 'TenantSettingsChanged', data: { tenant_id: 't1', changes: { default_language: 'fr' } } },
        ]);
      spec.given([created]).when({ type: 'UpdateTenant', data: { name: 'Acme', settings: { timezone: 'UTC' } } }).thenNothingHappened();
    });

    it('refuses the whole update for one bad field, named by its path', () => {
      spec
        .given([created])
        .when({ type: 'UpdateTenant', data: { name: 'Acme Corp', branding: { primary_color: 'red' } } })
        .thenThrows('invalid', 'invalid_branding', 'branding.primary_color');
      spec.given([created]).when({ type: 'UpdateTenant', data: { settings: { default_language: 'english' } } }).thenThrows('invalid', 'invalid_settings', 'settings.default_language');
      spec.given([created]).when({ type: 'UpdateTenant', data: { name: ' ' } }).thenThrows('invalid', 'invalid_name', 'name');
    });
  });

  describe('deletion (soft)', () => {
    const deleted: TenantEvent = { type: 'TenantDeleted', data: { tenant_id: 't1', deleted_at: FIXED_NOW.toISOString() } };

    it('deletes an active or a suspended tenant', () => {
      spec.given([created]).when({ type: 'DeleteTenant', data: {} }).then([deleted]);
      spec.given([created, suspended]).when({ type: 'DeleteTenant', data: {} }).then([deleted]);
    });

    it('refuses every change to a deleted tenant with 409 tenant_deleted, a second deletion included', () => {
      const commands: TenantCommand[] = [
        { type: 'DeleteTenant', data: {} },
        { type: 'SuspendTenant', data: { reason: 'late' } },
        { type: 'UnsuspendTenant', data: {} },
        { type: 'RenameTenant', data: { name: 'Zombie' } },
        { type: 'UpdateTenant', data: { name: 'Zombie' } },
        { type: 'ChangeTenantBranding', data: { changes: { primary_color: '#000000' } } },
        { type: 'ChangeTenantSettings', data: { changes: { timezone: 'Europe/Paris' } } },
        { type: 'RotateWidgetToken', data: { token_hash: 'h', token_sealed: 's' } },
      ];
      for (const command of commands) spec.given([created, deleted]).when(command).thenThrows('conflict', 'tenant_deleted');
      spec.given([created, deleted]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'acme' } }).thenThrows('conflict', 'tenant_exists');
    });

    it('is not found before creation', () => {
      spec.given([]).when({ type: 'DeleteTenant', data: {} }).thenThrows('not_found', 'tenant_not_found');
    });
  });
});

describe('tenant slugs', () => {
  it('accepts DNS-label slugs and refuses the rest', () => {
    expect(slugProblem('acme-shoes')).to.equal(null);
    for (const bad of ['ab', '1acme', 'acme-', 'ac--me', 'Acme', 'admin', 'a'.repeat(64)]) expect(slugProblem(bad), bad).to.be.a('string');
  });

  it('suggests a slug from a name', () => {
    expect(slugFromName('Acme Shoes, Inc.')).to.equal('acme-shoes-inc');
    expect(slugFromName('Café Zoë')).to.equal('cafe-zoe');
    expect(slugProblem(slugFromName('42'))).to.equal(null);
  });
});
