// The one text rule (domain/shared/text.ts) and every decider that takes a name, a title or a
// display name: NFC, trimmed, no control, bidi-override or lone-surrogate character, lengths
// in characters.

import { expect } from 'chai';
import { isLeft, isRight } from 'fp-ts/Either';
import { checkText, characterCount, storableMultiLineText } from '../../domain/shared/text';
import type { TeamEvent } from '../../domain/team/team';
import { teamDecider } from '../../domain/team/team';
import type { TenantEvent } from '../../domain/tenant/events';
import { DEFAULT_TENANT_SETTINGS, tenantDecider } from '../../domain/tenant/tenant';
import type { UserEvent } from '../../domain/user/events';
import { userDecider } from '../../domain/user/user';
import { type WorkspaceEvent, workspaceDecider } from '../../domain/workspace/workspace';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const DECOMPOSED = 'Cafe\u0301'; // "Café" as e + combining acute accent
const COMPOSED = 'Caf\u00e9';
const ASTRAL = '\u{1F600}'; // one character, two UTF-16 units

/** Text each single-line name refuses, with what the message must mention. */
const REFUSED: Array<[string, string, RegExp]> = [
  ['a NUL byte', 'Sales\u0000', /control character \(U\+0000\)/],
  ['an escape character', 'a\u001b[31mred', /control character \(U\+001B\)/],
  ['a line feed inside', 'two\nlines', /control character \(U\+000A\)/],
  ['DEL', 'del\u007f', /control character \(U\+007F\)/],
  ['a C1 control', 'next\u0085line', /control character \(U\+0085\)/],
  ['a right-to-left override', 'invoice\u202Etxt.exe', /bidirectional override character \(U\+202E\)/],
  ['a bidi isolate', 'a\u2066b', /bidirectional override character \(U\+2066\)/],
  ['a lone high surrogate', 'x\uD800y', /lone surrogate/],
  ['a lone low surrogate', '\uDC00x', /lone surrogate/],
  ['a line separator', 'a\u2028b', /line separator \(U\+2028\)/],
];

describe('text rule (domain/shared/text.ts)', () => {
  it('stores the NFC form, trimmed', () => {
    const checked = checkText('name', `  ${DECOMPOSED} \t`, { max: 100 });
    expect(checked).to.deep.equal({ _tag: 'Right', right: COMPOSED });
  });

  it('refuses control, bidi-override and lone-surrogate characters, naming the field and the character', () => {
    for (const [what, value, message] of REFUSED) {
      const checked = checkText('title', value, { max: 100 });
      if (!isLeft(checked)) throw new Error(`${what} was accepted`);
      expect({ kind: checked.left.kind, code: checked.left.code, field: checked.left.field }, what).to.deep.equal({ kind: 'invalid', code: 'invalid_request', field: 'title' });
      expect(checked.left.message, what).to.match(message);
    }
  });

  it('keeps tab, line feed and carriage return in multi-line text, and refuses the rest there too', () => {
    expect(checkText('welcome_message', 'Hello,\r\n\tworld', { max: 100, multiline: true })).to.deep.equal({ _tag: 'Right', right: 'Hello,\r\n\tworld' });
    expect(isLeft(checkText('welcome_message', 'Hello\u0000', { max: 100, multiline: true }))).to.equal(true);
    expect(isLeft(checkText('welcome_message', 'Hello \u202E', { max: 100, multiline: true }))).to.equal(true);
  });

  it('makes a text from elsewhere storable as multi-line text: refused characters become spaces, a cut character goes', () => {
    const extracted = `Page 1\fPage 2 \u202Eflipped\u0007\n\tindented ${'\uD83D\uDE00'.slice(0, 1)}`;
    expect(isLeft(checkText('message', extracted, { max: 100, multiline: true, code: 'invalid_message' }))).to.equal(true);
    const storable = storableMultiLineText(extracted);
    expect(storable).to.equal('Page 1 Page 2  flipped \n\tindented ');
    expect(isRight(checkText('message', storable, { max: 100, multiline: true, code: 'invalid_message' }))).to.equal(true);
  });

  it('counts characters, not UTF-16 units, after normalising', () => {
    expect(characterCount(ASTRAL)).to.equal(1);
    expect(isRight(checkText('name', ASTRAL.repeat(100), { max: 100 }))).to.equal(true);
    expect(isLeft(checkText('name', ASTRAL.repeat(101), { max: 100 }))).to.equal(true);
    // 100 decomposed "é" are 200 code points before NFC and 100 after.
    expect(isRight(checkText('name', 'e\u0301'.repeat(100), { max: 100 }))).to.equal(true);
  });

  it('checks the length bounds with the given code', () => {
    const empty = checkText('name', '   ', { max: 10, code: 'invalid_name' });
    if (!isLeft(empty)) throw new Error('an empty name was accepted');
    expect({ code: empty.left.code, message: empty.left.message }).to.deep.equal({ code: 'invalid_name', message: 'name must be 1 to 10 characters' });
    expect(checkText('description', '', { min: 0, max: 10 })).to.deep.equal({ _tag: 'Right', right: '' });
  });
});

describe('deciders apply the text rule', () => {
  const at = FIXED_NOW.toISOString();

  describe('user name', () => {
    const spec = deciderSpec(userDecider);
    const register = (name: string) => ({ type: 'RegisterUser' as const, data: { user_id: 'u1', email: 'ada@example.com', name, password_hash: 'h' } });

    it('stores the NFC form', () => {
      const registered: UserEvent = { type: 'UserRegistered', data: { user_id: 'u1', email: 'ada@example.com', name: COMPOSED, password_hash: 'h', registered_at: at } };
      spec.given([]).when(register(` ${DECOMPOSED} `)).then([registered]);
    });

    it('refuses each hostile name with invalid_name on the name', () => {
      for (const [, value] of REFUSED) spec.given([]).when(register(value)).thenThrows('invalid', 'invalid_name', 'name');
    });
  });

  describe('organization name, display name and welcome message', () => {
    const spec = deciderSpec(tenantDecider);
    const created: TenantEvent = {
      type: 'TenantCreated',
      data: { tenant_id: 't1', name: 'Acme', slug: 'acme', branding: {}, settings: DEFAULT_TENANT_SETTINGS, created_at: at },
    };

    it('creates and renames with the NFC form', () => {
      spec
        .given([])
        .when({ type: 'CreateTenant', data: { tenant_id: 't1', name: DECOMPOSED, slug: 'acme' } })
        .then([{ ...created, data: { ...created.data, name: COMPOSED } } as TenantEvent]);
      spec.given([created]).when({ type: 'RenameTenant', data: { name: DECOMPOSED } }).then([{ type: 'TenantRenamed', data: { tenant_id: 't1', name: COMPOSED, previous_name: 'Acme' } }]);
    });

    it('refuses hostile names with invalid_name, creating or renaming', () => {
      for (const [, value] of REFUSED) {
        spec.given([]).when({ type: 'CreateTenant', data: { tenant_id: 't1', name: value, slug: 'acme' } }).thenThrows('invalid', 'invalid_name', 'name');
        spec.given([created]).when({ type: 'RenameTenant', data: { name: value } }).thenThrows('invalid', 'invalid_name', 'name');
      }
    });

    it('normalises branding and settings texts, and refuses hostile ones naming the field', () => {
      spec
        .given([created])
        .when({ type: 'ChangeTenantBranding', data: { changes: { display_name: ` ${DECOMPOSED}`, welcome_message: 'Hi!\nAsk away.' } } })
        .then([{ type: 'TenantBrandingChanged', data: { tenant_id: 't1', changes: { display_name: COMPOSED, welcome_message: 'Hi!\nAsk away.' } } }]);
      spec.given([created]).when({ type: 'ChangeTenantBranding', data: { changes: { display_name: 'Acme\u202E' } } }).thenThrows('invalid', 'invalid_branding', 'display_name');
      spec.given([created]).when({ type: 'ChangeTenantBranding', data: { changes: { welcome_message: 'Hi\u0000' } } }).thenThrows('invalid', 'invalid_branding', 'welcome_message');
      spec.given([created]).when({ type: 'ChangeTenantSettings', data: { changes: { assistant_name: 'Bot\u0007' } } }).thenThrows('invalid', 'invalid_settings', 'assistant_name');
      spec
        .given([])
        .when({ type: 'CreateTenant', data: { tenant_id: 't1', name: 'Acme', slug: 'acme', branding: { display_name: 'x\uD800' } } })
        .thenThrows('invalid', 'invalid_branding', 'display_name');
    });

    it('records nothing when the normalised display name is the current one', () => {
      const branded: TenantEvent = { type: 'TenantBrandingChanged', data: { tenant_id: 't1', changes: { display_name: COMPOSED } } };
      spec.given([created, branded]).when({ type: 'ChangeTenantBranding', data: { changes: { display_name: DECOMPOSED } } }).thenNothingHappened();
    });
  });

  describe('team name and description', () => {
    const spec = deciderSpec(teamDecider);
    const created: TeamEvent = { type: 'TeamCreated', data: { tenant_id: 't1', team_id: 'team-1', name: COMPOSED, description: null, created_at: at } };

    it('creates with the NFC form, and a rename to another spelling of the same name changes nothing', () => {
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: 't1', team_id: 'team-1', name: DECOMPOSED } }).then([created]);
      spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: 't1', name: DECOMPOSED } }).thenNothingHappened();
    });

    it('refuses hostile names and descriptions with invalid_request naming the field', () => {
      for (const [, value] of REFUSED) {
        spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: 't1', team_id: 'team-1', name: value } }).thenThrows('invalid', 'invalid_request', 'name');
        spec.given([created]).when({ type: 'UpdateTeam', data: { tenant_id: 't1', name: value } }).thenThrows('invalid', 'invalid_request', 'name');
      }
      spec.given([]).when({ type: 'CreateTeam', data: { tenant_id: 't1', team_id: 'team-1', name: 'Ok', description: 'a\u0000' } }).thenThrows('invalid', 'invalid_request', 'description');
    });
  });

  describe('workspace name', () => {
    const spec = deciderSpec(workspaceDecider);
    const created: WorkspaceEvent = { type: 'WorkspaceCreated', data: { tenant_id: 't1', workspace_id: 'w1', name: COMPOSED, is_default: false, created_at: at } };

    it('creates and renames with the NFC form', () => {
      spec.given([]).when({ type: 'CreateWorkspace', data: { tenant_id: 't1', workspace_id: 'w1', name: DECOMPOSED, is_default: false } }).then([created]);
      spec.given([created]).when({ type: 'RenameWorkspace', data: { name: `${DECOMPOSED} ` } }).thenNothingHappened();
      spec.given([created]).when({ type: 'RenameWorkspace', data: { name: 'Docs' } }).then([{ type: 'WorkspaceRenamed', data: { tenant_id: 't1', workspace_id: 'w1', name: 'Docs' } }]);
    });

    it('refuses hostile names with invalid_name, creating or renaming', () => {
      for (const [, value] of REFUSED) {
        spec.given([]).when({ type: 'CreateWorkspace', data: { tenant_id: 't1', workspace_id: 'w1', name: value, is_default: false } }).thenThrows('invalid', 'invalid_name', 'name');
        spec.given([created]).when({ type: 'RenameWorkspace', data: { name: value } }).thenThrows('invalid', 'invalid_name', 'name');
      }
    });
  });
});
