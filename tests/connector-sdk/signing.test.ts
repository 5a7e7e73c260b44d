// Request signing (spec 5.2): the exact signed string, the header format, constant-time
// verification across rotation secrets, and the replay window in both directions.
import { expect } from 'chai';
import { signRequest, signedHeaders, verifySignature } from '../../adapters/connector-sdk';

const BODY = '{"protocol_version":"1","request_id":"r-1","type":"ping"}';
// Computed independently: printf 'v1:1700000000:<body>' | openssl dgst -sha256 -hmac 'test-secret'
const EXPECTED = 'v1=b7f85729838b37cf7167b7ac75389df8b2b840ffddea72eb41e3610576da3222';

describe('connector request signing', () => {
  describe('signRequest', () => {
    it('is v1= + lowercase hex HMAC-SHA256 of v1:<timestamp>:<raw body>', () => {
      expect(signRequest('test-secret', 1700000000, BODY)).to.equal(EXPECTED);
    });

    it('signs the same bytes whether given a string or a Buffer', () => {
      expect(signRequest('test-secret', '1700000000', Buffer.from(BODY))).to.equal(EXPECTED);
    });

    it('depends on the secret, the timestamp and every byte of the body', () => {
      expect(signRequest('other', 1700000000, BODY)).to.not.equal(EXPECTED);
      expect(signRequest('test-secret', 1700000001, BODY)).to.not.equal(EXPECTED);
      expect(signRequest('test-secret', 1700000000, `${BODY} `)).to.not.equal(EXPECTED);
    });
  });

  describe('verifySignature', () => {
    const base = { secrets: ['test-secret'], signature: EXPECTED, timestamp: '1700000000', rawBody: BODY, nowSeconds: 1700000000, maxSkewSeconds: 300 };

    it('accepts the right signature and says which secret matched', () => {
      expect(verifySignature(base)).to.deep.equal({ valid: true, secretIndex: 0 });
      expect(verifySignature({ ...base, secrets: ['new-secret', 'test-secret'] })).to.deep.equal({ valid: true, secretIndex: 1 });
    });

    it('refuses a mismatch, including a signature of the wrong length or case', () => {
      expect(verifySignature({ ...base, secrets: ['nope'] })).to.deep.equal({ valid: false, refusal: 'signature_mismatch' });
      expect(verifySignature({ ...base, signature: EXPECTED.slice(0, -2) })).to.deep.equal({ valid: false, refusal: 'malformed_signature' });
      expect(verifySignature({ ...base, signature: `${EXPECTED}00` })).to.deep.equal({ valid: false, refusal: 'malformed_signature' });
      expect(verifySignature({ ...base, signature: EXPECTED.toUpperCase() })).to.deep.equal({ valid: false, refusal: 'malformed_signature' });
      expect(verifySignature({ ...base, signature: EXPECTED.replace('v1=', 'v0=') })).to.deep.equal({ valid: false, refusal: 'malformed_signature' });
    });

    it('refuses missing headers', () => {
      expect(verifySignature({ ...base, signature: undefined })).to.deep.equal({ valid: false, refusal: 'missing_signature' });
      expect(verifySignature({ ...base, timestamp: undefined })).to.deep.equal({ valid: false, refusal: 'missing_timestamp' });
      expect(verifySignature({ ...base, signature: '' })).to.deep.equal({ valid: false, refusal: 'missing_signature' });
    });

    it('refuses timestamps that are not plain Unix seconds', () => {
      for (const timestamp of ['1700000000.0', '-1700000000', '1.7e9', ' 1700000000', 'now']) {
        expect(verifySignature({ ...base, timestamp }), timestamp).to.deep.equal({ valid: false, refusal: 'malformed_timestamp' });
      }
    });

    it('accepts the window edges in both directions and refuses one second beyond', () => {
      expect(verifySignature({ ...base, nowSeconds: 1700000300 }).valid).to.equal(true);
      expect(verifySignature({ ...base, nowSeconds: 1699999700 }).valid).to.equal(true);
      expect(verifySignature({ ...base, nowSeconds: 1700000301 })).to.deep.equal({ valid: false, refusal: 'timestamp_outside_window' });
      expect(verifySignature({ ...base, nowSeconds: 1699999699 })).to.deep.equal({ valid: false, refusal: 'timestamp_outside_window' });
    });
  });

  describe('cross-check with OpenSSL', () => {
    // Each computed independently: printf 'v1:1700000000:<body>' | openssl dgst -sha256 -hmac '<secret>'
    const vectors = [
      { secret: 'test-secret', body: BODY, signature: EXPECTED },
      // Longer than SHA-256's 64-byte block: the key is hashed first.
      { secret: 'k'.repeat(100), body: BODY, signature: 'v1=8c23bb764327ba11f34d2237e4984339241b34b56fda76397ddc190d7ef7ab66' },
      // Secret and body as UTF-8 bytes.
      { secret: 'sécret', body: '{"message":"crème brûlée"}', signature: 'v1=9dd85bfab9d22b7629f602b03ca549e16dea3da268eaf398978f719fd28e10a8' },
    ];

    it('signs and verifies exactly what OpenSSL computes', () => {
      for (const { secret, body, signature } of vectors) {
        expect(signRequest(secret, 1700000000, body), secret).to.equal(signature);
        expect(signRequest(secret, 1700000000, Buffer.from(body, 'utf8')), secret).to.equal(signature);
        const check = verifySignature({ secrets: [secret], signature, timestamp: '1700000000', rawBody: Buffer.from(body, 'utf8'), nowSeconds: 1700000000, maxSkewSeconds: 300 });
        expect(check, secret).to.deep.equal({ valid: true, secretIndex: 0 });
      }
    });
  });

  describe('signedHeaders', () => {
    it('carries signature, timestamp, protocol and the trace id when given', () => {
      const headers = signedHeaders('test-secret', BODY, { timestamp: 1700000000, traceId: 'trace-1' });
      expect(headers).to.deep.equal({
        'content-type': 'application/json',
        'x-svc-signature': EXPECTED,
        'x-svc-timestamp': '1700000000',
        'x-svc-protocol': '1',
        'x-svc-trace-id': 'trace-1',
      });
    });
  });
});
