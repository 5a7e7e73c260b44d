// The widget's visitor rules (application/widget/widget-access.ts): who a visitor is from the
// headers the widget sends, the host's HMAC signature of verified identity, and the origin rule.

import { createHmac, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { type VisitorClaim, identitySignature, originAllowed, visitorOf } from '../../application/widget/widget-access';
import { DomainError } from '../../domain/shared/errors';
import { DEFAULT_WIDGET_SETTINGS, type WidgetSettings } from '../../domain/widget-config/widget-config';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';

describe('widget visitors and verified identity', () => {
  const secrets = new AesGcmSecrets(randomBytes(32));
  const SECRET = 'wsec_the-identity-secret-of-the-widget';
  const VISITOR = 'V1StGXR8_Z5jdHi6B-myT0';
  const widget = (identity_verification: WidgetSettings['identity_verification'], identity_secret: string | null = SECRET, tenant_id = 't1') => ({
    tenant_id,
    settings: { ...DEFAULT_WIDGET_SETTINGS, identity_verification },
    identity_secret,
  });
  const refusal = (run: () => unknown): { kind: string; code: string; field?: string } => {
    try {
      run();
    } catch (error) {
      expect(error).to.be.instanceOf(DomainError);
      const { kind, code, field } = error as DomainError;
      return field === undefined ? { kind, code } : { kind, code, field };
    }
    throw new Error('expected a refusal');
  };

  describe('identitySignature', () => {
    it('is the hex HMAC-SHA256 of the user id with the secret, as a host backend computes it', () => {
      const expected = createHmac('sha256', SECRET).update('user-42').digest('hex');
      expect(identitySignature(SECRET, 'user-42')).to.equal(expected).and.match(/^[0-9a-f]{64}$/);
      expect(identitySignature(SECRET, 'user-43')).to.not.equal(expected);
      expect(identitySignature('another secret', 'user-42')).to.not.equal(expected);
      // UTF-8, as every server library hashes a string.
      expect(identitySignature(SECRET, 'zoë')).to.equal(createHmac('sha256', SECRET).update(Buffer.from('zoë', 'utf8')).digest('hex'));
    });
  });

  describe('visitorOf', () => {
    const claim = (over: Partial<VisitorClaim> = {}): VisitorClaim => ({ visitor_id: VISITOR, ...over });

    it('makes an anonymous visitor an end user named by a keyed digest of the visitor id, never the id itself', () => {
      const visitor = visitorOf({ secrets }, widget('off'), claim());
      expect(visitor.verified).to.equal(false);
      expect(visitor.user_id).to.equal(null);
      expect(visitor.legacy_party_id).to.equal(null);
      expect(visitor.party.kind).to.equal('end_user');
      expect(visitor.party.id).to.match(/^visitor:[0-9a-f]{32}$/);
      expect(visitor.party.id).to.not.include(VISITOR);
      expect(visitorOf({ secrets }, widget('off'), claim()).party).to.deep.equal(visitor.party);
      expect(visitorOf({ secrets }, widget('off'), claim({ visitor_id: `${VISITOR}x` })).party.id).to.not.equal(visitor.party.id);
      // Another deployment's key gives another name: the id cannot be guessed back from it.
      expect(visitorOf({ secrets: new AesGcmSecrets(randomBytes(32)) }, widget('off'), claim()).party.id).to.not.equal(visitor.party.id);
    });

    it('refuses a visitor id that is missing, short, long or not URL-safe (400 invalid_visitor naming visitor_id)', () => {
      for (const visitor_id of ['', 'short', 'a'.repeat(21), 'a'.repeat(65), `${'a'.repeat(22)} `, `${'a'.repeat(21)}/`, `${'a'.repeat(21)}é`]) {
        expect(refusal(() => visitorOf({ secrets }, widget('off'), claim({ visitor_id }))), JSON.stringify(visitor_id)).to.deep.equal({ kind: 'invalid', code: 'invalid_visitor', field: 'visitor_id' });
      }
      expect(refusal(() => visitorOf({ secrets }, widget('off'), { visitor_id: undefined as unknown as string }))).to.deep.include({ code: 'invalid_visitor' });
      expect(visitorOf({ secrets }, widget('off'), claim({ visitor_id: 'a'.repeat(64) })).verified).to.equal(false);
    });

    it('makes a signed user id a verified visitor named by a keyed digest of it, the same person on any device, case of the hex aside', () => {
      const hash = identitySignature(SECRET, 'user-42');
      const [optional, required] = (['optional', 'required'] as const).map((mode) => visitorOf({ secrets }, widget(mode), claim({ user_id: 'user-42', user_hash: hash })));
      expect(optional).to.deep.include({ verified: true, user_id: 'user-42', legacy_party_id: 'verified:user-42' });
      expect(optional.party.kind).to.equal('end_user');
      expect(optional.party.id).to.match(/^verified:[0-9a-f]{32}$/);
      expect(optional.party.id).to.not.include('user-42');
      expect(required.party).to.deep.equal(optional.party);
      const elsewhere = visitorOf({ secrets }, widget('required'), claim({ visitor_id: 'b'.repeat(30), user_id: 'user-42', user_hash: hash.toUpperCase() }));
      expect(elsewhere.party).to.deep.equal(optional.party);
      // Another user, or the same user id at another organization, is another person.
      expect(visitorOf({ secrets }, widget('optional'), claim({ user_id: 'user-43', user_hash: identitySignature(SECRET, 'user-43') })).party.id).to.not.equal(optional.party.id);
      expect(visitorOf({ secrets }, widget('optional', SECRET, 't2'), claim({ user_id: 'user-42', user_hash: hash })).party.id).to.not.equal(optional.party.id);
    });

    it('refuses a wrong, missing or stale signature (401 invalid_identity), and any signature while verification is off', () => {
      const unauthorized = { kind: 'unauthorized', code: 'invalid_identity' };
      const good = identitySignature(SECRET, 'user-42');
      expect(refusal(() => visitorOf({ secrets }, widget('optional'), claim({ user_id: 'user-42', user_hash: identitySignature(SECRET, 'user-43') })))).to.deep.equal(unauthorized);
      expect(refusal(() => visitorOf({ secrets }, widget('optional'), claim({ user_id: 'user-42' })))).to.deep.equal(unauthorized);
      expect(refusal(() => visitorOf({ secrets }, widget('optional'), claim({ user_id: 'user-42', user_hash: good.slice(0, 63) })))).to.deep.equal(unauthorized);
      expect(refusal(() => visitorOf({ secrets }, widget('optional'), claim({ user_id: 'user-42', user_hash: `${good}00` })))).to.deep.equal(unauthorized);
      // Signed with the secret before a rotation.
      expect(refusal(() => visitorOf({ secrets }, widget('required', 'wsec_the-new-secret'), claim({ user_id: 'user-42', user_hash: good })))).to.deep.equal(unauthorized);
      expect(refusal(() => visitorOf({ secrets }, widget('off'), claim({ user_id: 'user-42', user_hash: good })))).to.deep.equal(unauthorized);
      expect(refusal(() => visitorOf({ secrets }, widget('optional', null), claim({ user_id: 'user-42', user_hash: good })))).to.deep.equal(unauthorized);
    });

    it('refuses a user id that is not 1 to 200 printable characters (400 invalid_identity naming user_id)', () => {
      for (const user_id of ['user 42', 'a'.repeat(201), 'tab\there', 'zoë']) {
        expect(refusal(() => visitorOf({ secrets }, widget('optional'), claim({ user_id, user_hash: identitySignature(SECRET, user_id) })))).to.deep.equal({ kind: 'invalid', code: 'invalid_identity', field: 'user_id' });
      }
    });

    it('lets nobody chat unsigned when verification is required (401 identity_required); optional lets anonymous visitors in', () => {
      expect(refusal(() => visitorOf({ secrets }, widget('required'), claim()))).to.deep.equal({ kind: 'unauthorized', code: 'identity_required' });
      expect(refusal(() => visitorOf({ secrets }, widget('required'), claim({ user_id: '', user_hash: '' })))).to.deep.equal({ kind: 'unauthorized', code: 'identity_required' });
      expect(visitorOf({ secrets }, widget('optional'), claim()).verified).to.equal(false);
    });
  });

  describe('originAllowed', () => {
    const settings = { allowed_origins: ['https://shop.example', 'https://*.example.com'] };

    it('allows no Origin (no browser page), the platform’s own origin, and the allowed ones with their wildcards', () => {
      expect(originAllowed(settings, undefined, 'https://platform.example')).to.equal(true);
      expect(originAllowed(settings, null, null)).to.equal(true);
      expect(originAllowed(settings, '', null)).to.equal(true);
      expect(originAllowed({ allowed_origins: [] }, 'https://Platform.Example', 'https://platform.example')).to.equal(true);
      expect(originAllowed(settings, 'https://shop.example', null)).to.equal(true);
      expect(originAllowed(settings, 'https://eu.example.com', null)).to.equal(true);
    });

    it('refuses any other origin, the bare host of a wildcard, and the opaque origin null', () => {
      expect(originAllowed(settings, 'https://evil.example', 'https://platform.example')).to.equal(false);
      expect(originAllowed(settings, 'https://example.com', null)).to.equal(false);
      expect(originAllowed(settings, 'null', null)).to.equal(false);
      expect(originAllowed({ allowed_origins: [] }, 'https://shop.example', null)).to.equal(false);
    });
  });
});
