import { expect } from 'chai';
import { type AuditCheckpointEvent, auditCheckpointDecider, auditCheckpointSigningText } from '../../domain/audit-checkpoint/audit-checkpoint';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(auditCheckpointDecider);
const checkpoint = (seq: number, entries: number, position: number, hash = `h${seq}`): AuditCheckpointEvent['data'] => ({
  tenant_id: 't1',
  seq,
  chain_head_hash: hash,
  position,
  entries,
  anchored_at: FIXED_NOW.toISOString(),
  key_id: 'k1',
  signature: `s${seq}`,
});
const recorded = (data: AuditCheckpointEvent['data']): AuditCheckpointEvent => ({ type: 'AuditCheckpointRecorded', data });
const record = (data: AuditCheckpointEvent['data']) => ({ type: 'RecordAuditCheckpoint' as const, data });

describe('audit checkpoint decider', () => {
  it('records the first checkpoint, and each one that follows the last', () => {
    spec.given([]).when(record(checkpoint(100, 100, 400))).then([recorded(checkpoint(100, 100, 400))]);
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(130, 30, 520))).then([recorded(checkpoint(130, 30, 520))]);
  });

  it('records nothing for an entry already covered (a redelivery, or another process was first)', () => {
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(100, 100, 400))).thenNothingHappened();
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(60, 60, 200))).thenNothingHappened();
  });

  it('refuses a checkpoint that does not follow the last one, or disagrees with it', () => {
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(150, 100, 600))).thenThrows('conflict', 'audit_checkpoint_out_of_date');
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(150, 50, 400))).thenThrows('conflict', 'audit_checkpoint_out_of_date');
    spec.given([recorded(checkpoint(100, 100, 400))]).when(record(checkpoint(100, 100, 400, 'other'))).thenThrows('conflict', 'audit_checkpoint_disagrees');
    spec.given([]).when(record(checkpoint(0, 0, 1))).thenThrows('invalid', 'invalid_checkpoint');
  });

  it('signs a fixed text: a context line, then the statement fields in order', () => {
    expect(auditCheckpointSigningText(checkpoint(5, 5, 9))).to.equal(`svc.audit-checkpoint.v1\n["t1",5,"h5",9,5,"${FIXED_NOW.toISOString()}","k1"]`);
  });
});
