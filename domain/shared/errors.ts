// The one error hierarchy of the domain. The HTTP and GraphQL edges map `kind` to a status
// (invalid 400, unauthorized 401, forbidden 403, not_found 404, conflict 409, gone 410,
// precondition_failed 412, too_large 413, unsupported_type 415, unprocessable 422,
// rate_limited 429, unavailable 503); `code` is the stable machine-readable part.

export type DomainErrorKind =
  | 'invalid'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'precondition_failed'
  | 'too_large'
  | 'unsupported_type'
  | 'unprocessable'
  | 'rate_limited'
  /** A passing state of the service, not of the request: the same request may succeed in a moment. */
  | 'unavailable';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    /** The request field at fault, for `invalid`. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** Fields a client needs beyond code and message (a quota's limit and usage), added to the error body. */
  details(): Record<string, unknown> | undefined {
    return undefined;
  }
}

export const invalid = (code: string, message: string, field?: string): DomainError => new DomainError('invalid', code, message, field);
export const notFound = (code: string, message: string): DomainError => new DomainError('not_found', code, message);
export const conflict = (code: string, message: string): DomainError => new DomainError('conflict', code, message);
export const forbidden = (code: string, message: string): DomainError => new DomainError('forbidden', code, message);
/** Larger than the limit for its kind (a document over DOCUMENT_MAX_BYTES). */
export const tooLarge = (code: string, message: string): DomainError => new DomainError('too_large', code, message);
/** Of a type that is not accepted (a file that is no supported document). */
export const unsupportedType = (code: string, message: string): DomainError => new DomainError('unsupported_type', code, message);
/** Existed, and no longer does (an expired invitation). */
export const gone = (code: string, message: string): DomainError => new DomainError('gone', code, message);

/**
 * A refusal that still records events (a wrong one-time code counts as an attempt): the
 * command handler appends `events`, then reports the error.
 */
export class RejectionWithEvents<Event = unknown> extends DomainError {
  constructor(
    readonly events: Event[],
    error: DomainError,
  ) {
    super(error.kind, error.code, error.message, error.field);
  }
}

/** What a thrown value says, for a record or a log line: an Error's message (its name when it has none), anything else as text. */
export const messageOf = (thrown: unknown): string => (thrown instanceof Error ? thrown.message || thrown.name : String(thrown));
