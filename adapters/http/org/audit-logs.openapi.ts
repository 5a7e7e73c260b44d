// OpenAPI description of the audit log (org/audit-logs.ts).

import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, boolean, dateTime, enumOf, integer, nullable, object, page, ref, string } from '../openapi/describe';

export const FILTERS: readonly QueryParameter[] = [
  { name: 'actor_id', description: 'only entries by this actor', schema: { type: 'string', minLength: 1, maxLength: 200 } },
  { name: 'action', description: 'only this action (an event type, e.g. `TeamCreated`)', schema: { type: 'string', minLength: 1, maxLength: 200 } },
  { name: 'resource_type', description: 'only this kind of resource (e.g. `team`)', schema: { type: 'string', minLength: 1, maxLength: 200 } },
  { name: 'resource_id', description: 'only this resource', schema: { type: 'string', minLength: 1, maxLength: 200 } },
  { name: 'from', description: 'only entries at or after this time', schema: dateTime() },
  { name: 'to', description: 'only entries at or before this time', schema: dateTime() },
];

export const orgAuditLogsApi: ApiArea = {
  tag: 'organization',
  schemas: {
    AuditLogEntry: object({
      id: string('the id of the event recorded'),
      tenant_id: string(),
      actor_kind: enumOf(['user', 'admin', 'widget', 'end_user', 'connector', 'system']),
      actor_id: string(),
      subject_kind: { type: ['string', 'null'], enum: ['user', null], description: 'whom the actor acted as: the member a super admin impersonated; null when the actor acted as themselves' },
      subject_id: nullable(string('the impersonated member; null when the actor acted as themselves')),
      action: string('the event type'),
      resource_type: string(),
      resource_id: string(),
      occurred_at: dateTime(),
      ip: nullable(string()),
      request_id: nullable(string()),
      correlation_id: string(),
      seq: integer('1, 2, 3 ... per organization'),
      details: nullable({ type: 'object', description: 'what a reader needs beyond the action, for the few events that have it (a denial: method, path, code; a suppressed count; an impersonation: user_id, admin_id, expires_at)' }),
    }),
    AuditChainVerification: object({
      ok: boolean(),
      entries_checked: integer(),
      checkpoints_checked: integer('signed checkpoints whose signature and anchored hash were checked'),
      anchored_through_seq: integer('the last entry a valid checkpoint vouches for (0 when none)'),
      first_break: nullable({
        type: 'object',
        required: ['id', 'seq', 'reason'],
        properties: {
          id: string('the entry at the break, or the checkpoint event when the log has no such entry'),
          seq: integer(),
          reason: enumOf(['hash_mismatch', 'broken_link', 'sequence_gap', 'checkpoint_signature_invalid', 'checkpoint_mismatch', 'checkpoint_beyond_log']),
          checkpoint_id: string('for a checkpoint’s break: the checkpoint event'),
          after_seq: integer('for checkpoint_mismatch: the changed entry lies after this entry and at most at seq'),
        },
      }),
    }),
    AuditExportRecord: {
      description: 'one line of the export: the entries (with their chain fields), then the signed checkpoints, then the keys that verify them, the signing key first (README, "Audit log")',
      oneOf: [
        { type: 'object', required: ['record', 'id', 'seq', 'prev_hash', 'hash', 'data_hash'], properties: { record: { const: 'entry' } } },
        { type: 'object', required: ['record', 'id', 'tenant_id', 'seq', 'chain_head_hash', 'position', 'entries', 'anchored_at', 'key_id', 'signature'], properties: { record: { const: 'checkpoint' } } },
        { type: 'object', required: ['record', 'key_id', 'algorithm', 'public_key'], properties: { record: { const: 'signing_key' } } },
      ],
    },
  },
  routes: {
    '/api/v1/org/audit-logs': {
      get: {
        summary: 'Search the audit log',
        access: 'user',
        role: 'admin',
        query: [...FILTERS, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of entries, newest first', json: page(ref('AuditLogEntry')) },
      },
    },
    '/api/v1/org/audit-logs/verify': {
      get: {
        summary: "Verify the audit log's hash chain",
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'whether the chain holds, and its first break', json: ref('AuditChainVerification') },
      },
    },
    '/api/v1/org/audit-logs/export': {
      get: {
        summary: 'Export the audit log',
        access: 'user',
        role: 'admin',
        query: FILTERS,
        success: {
          status: 200,
          description: 'every matching entry, oldest first, then the checkpoints and the keys that verify them, one JSON object per line (sent as an attachment)',
          content: { type: 'application/x-ndjson', schema: ref('AuditExportRecord') },
        },
      },
    },
  },
};
