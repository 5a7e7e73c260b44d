import { expect } from 'chai';
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
