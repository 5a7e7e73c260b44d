// Idempotent requests: the use cases behind `Idempotency-Key` on creating routes.
//
// A request with a key starts by claiming it (`startIdempotentRequest`): it either runs, with
// a seed from which the use case derives the ids of what it creates, or it gets the answer the
// first request with this key was given. When it has run, `finishIdempotentRequest` records a
// 2xx answer (sealed: an answer may one day carry a secret shown once) or releases the key. An
// answer that holds a data subject's personal data is kept under that subject's key: once the
// subject is erased, a retry is 410 `personal_data_erased` rather than the erased texts again.
//
// The record is an aggregate in the event store rather than a read-model document: claiming
// must be atomic across processes (an append with the expected revision, as reservations do),
// and the answer must survive a restart; both stores give that only on the event side.

import { createHash } from 'node:crypto';
import {
  type IdempotencyKeyCommand,
  type IdempotencyKeyEvent,
  type IdempotencyKeyState,
  type KeptAnswer,
  idempotencyKeyDecider,
  idempotencyKeyEvents,
  idempotencyKeyStream,
} from '../../domain/idempotency-key/idempotency-key';
import { DomainError } from '../../domain/shared/errors';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';

export const idempotencyKeyAggregate: Aggregate<IdempotencyKeyCommand, IdempotencyKeyEvent, IdempotencyKeyState> = {
  decider: idempotencyKeyDecider,
  events: idempotencyKeyEvents,
};

/** How long a running request holds its key before a retry may take it over (a crashed holder). */
export const IDEMPOTENCY_HOLD_SECONDS = 30;

export interface IdempotencyDependencies extends CommandDependencies {
  secrets: Pick<Secrets, 'seal' | 'open' | 'digest'>;
  settings: { idempotencyKeyTtlSeconds: number };
}

export interface IdempotentRequest {
  /** Who asks and where: tenant, principal, method and route. A key is unique within its scope. */
  scope: readonly string[];
  /** The client's Idempotency-Key. */
  key: string;
  /** What is asked (path, query, body): a retry must ask exactly this again. */
  request: unknown;
}

export interface IdempotentAnswer {
  status: number;
  /** The headers worth replaying (Location, ETag). */
  headers: Record<string, string>;
  body: unknown;
  /** The data subject whose personal data the body holds (`conversation:<id>`): kept sealed under its key, erased with it. */
  subject?: string;
}

export interface IdempotencyClaim {
  stream: string;
  claimId: string;
}

export type IdempotentStart =
  /** Run the request; derive the ids it creates from `seed`. */
  | { kind: 'run'; claim: IdempotencyClaim; seed: string }
  /** The request was answered before: give the same answer. */
  | { kind: 'replay'; answer: IdempotentAnswer };

/** JSON with object keys sorted, so that `{a, b}` and `{b, a}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([name, field]) => `${JSON.stringify(name)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// Records are written without a tenant: they are the HTTP edge's bookkeeping, and the
// tenant's audit log shows the events of what the request created, not these.
const BOOKKEEPING = { tenantId: null } as const;

/** Claims the key for this request, or returns the answer it was given before (422 / 409 otherwise). */
export async function startIdempotentRequest(deps: IdempotencyDependencies, request: IdempotentRequest, context: RequestContext): Promise<IdempotentStart> {
  // Keyed digests: the key is the client's text, and the request may hold a password.
  const stream = idempotencyKeyStream(deps.secrets.digest(canonicalJson([...request.scope, request.key])));
  const requestHash = deps.secrets.digest(canonicalJson(request.request));
  const claimId = deps.ids.newId();
  const ttl = deps.settings.idempotencyKeyTtlSeconds;
  const result = await handleCommand(
    deps,
    idempotencyKeyAggregate,
    stream,
    { type: 'ClaimIdempotencyKey', data: { claim_id: claimId, request_hash: requestHash, hold_seconds: IDEMPOTENCY_HOLD_SECONDS, ttl_seconds: ttl } },
    context,
    BOOKKEEPING,
  );
  const [claimed] = result.events;
  if (claimed?.type === 'IdempotencyKeyClaimed') {
    const seed = createHash('sha256').update(`${stream}/${claimed.data.cycle}/${requestHash}`).digest('hex');
    return { kind: 'run', claim: { stream, claimId }, seed };
  }
  // Nothing claimed: the decider found this very request answered.
  const { state } = await loadAggregate(deps, idempotencyKeyAggregate, stream);
  if (state.status !== 'answered' || state.request_hash !== requestHash) {
    throw new DomainError('conflict', 'idempotency_key_in_use', 'a request with this Idempotency-Key is still running; retry in a moment');
  }
  const kept = state.answer;
  if (kept.kind === 'personal' && kept.answer === ERASED_PERSONAL_DATA) throw answerErased();
  const { headers, body } = JSON.parse(kept.kind === 'sealed' ? deps.secrets.open(kept.answer_sealed) : kept.answer) as Omit<IdempotentAnswer, 'status'>;
  return { kind: 'replay', answer: { status: state.status_code, headers, body } };
}

/** A retry whose first answer held personal data erased since: there is nothing to give again. */
const answerErased = (): DomainError =>
  new DomainError('gone', 'personal_data_erased', 'the answer to this request held personal data that was erased since; send a new request with a new Idempotency-Key');

/** The answer as kept: under its subject's key when it holds personal data (the store seals it), else sealed with the data key. */
function kept(deps: IdempotencyDependencies, answer: IdempotentAnswer): KeptAnswer {
  const text = JSON.stringify({ headers: answer.headers, body: answer.body ?? null });
  return answer.subject === undefined ? { kind: 'sealed', answer_sealed: deps.secrets.seal(text) } : { kind: 'personal', subject: answer.subject, answer: text };
}

/** Records the request's 2xx answer for its retries, or, with no answer, frees the key for a retry. */
export async function finishIdempotentRequest(deps: IdempotencyDependencies, claim: IdempotencyClaim, answer: IdempotentAnswer | null, context: RequestContext): Promise<void> {
  const command: IdempotencyKeyCommand = answer
    ? { type: 'RecordIdempotentAnswer', data: { claim_id: claim.claimId, status: answer.status, answer: kept(deps, answer), ttl_seconds: deps.settings.idempotencyKeyTtlSeconds } }
    : { type: 'ReleaseIdempotencyKey', data: { claim_id: claim.claimId } };
  await handleCommand(deps, idempotencyKeyAggregate, claim.stream, command, context, BOOKKEEPING);
}
