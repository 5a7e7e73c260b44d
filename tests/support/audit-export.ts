// What README.md ("Audit log") tells an offline verifier to do with an export, written here
// again so the export's definition is checked, not restated.

import { createHash, createPublicKey, verify } from 'node:crypto';
import { expect } from 'chai';

/** Checks every entry's chain and every checkpoint's signature (by the key its key_id names) and anchored hash; returns the checkpoints it checked. */
export function verifyExportOffline(lines: Array<Record<string, any>>): number {
  const keys = new Map(lines.filter((line) => line.record === 'signing_key').map((key) => [key.key_id, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.public_key }, format: 'jwk' })]));
  const hashes = new Map<number, string>();
  let previous = '0'.repeat(64);
  for (const entry of lines.filter((line) => line.record === 'entry')) {
    const fields = [entry.seq, entry.id, entry.tenant_id, entry.actor_kind, entry.actor_id, entry.action, entry.resource_type, entry.resource_id, entry.occurred_at, entry.ip, entry.request_id, entry.correlation_id, entry.position, entry.data_hash];
    const hash = createHash('sha256').update(`${previous}\n${JSON.stringify(fields)}`).digest('hex');
    expect(entry.prev_hash, `entry ${entry.seq}`).to.equal(previous);
    expect(entry.hash, `entry ${entry.seq}`).to.equal(hash);
    hashes.set(entry.seq, hash);
    previous = hash;
  }
  const checkpoints = lines.filter((line) => line.record === 'checkpoint');
  for (const checkpoint of checkpoints) {
    const text = `svc.audit-checkpoint.v1\n${JSON.stringify([checkpoint.tenant_id, checkpoint.seq, checkpoint.chain_head_hash, checkpoint.position, checkpoint.entries, checkpoint.anchored_at, checkpoint.key_id])}`;
    const publicKey = keys.get(checkpoint.key_id);
    expect(publicKey, `the key of checkpoint ${checkpoint.seq}`).to.not.equal(undefined);
    expect(verify(null, Buffer.from(text), publicKey!, Buffer.from(checkpoint.signature, 'base64url')), `signature of checkpoint ${checkpoint.seq}`).to.equal(true);
    expect(hashes.get(checkpoint.seq), `chain at checkpoint ${checkpoint.seq}`).to.equal(checkpoint.chain_head_hash);
  }
  return checkpoints.length;
}
