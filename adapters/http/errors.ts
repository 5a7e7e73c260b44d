// The HTTP face of errors: every failure leaves as `{code, message}` with the status of spec
// section 7.1. Domain errors map by kind; anything unexpected is a 500 that says nothing more.

import { DomainError, type DomainErrorKind } from '../../domain/shared/errors';
import { PaymentProviderError, ProviderCheckoutNotFoundError } from '../../application/ports/payment-provider';
import { InvalidCursorError } from '../../application/ports/read-store';
import { SpeechNotConfiguredError, SpeechProviderError } from '../../application/ports/speech';
import { RateLimitedError } from '../../application/user/abuse-controls';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** The HTTP status of each kind of domain error (REST and GraphQL's `extensions.status`). */
export const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  precondition_failed: 412,
  too_large: 413,
  unsupported_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

export interface ErrorResponse {
  status: number;
  body: { code: string; message: string; field?: string; [detail: string]: unknown };
  headers: Record<string, string>;
  /** Whether this is our fault (logged as an error) rather than the client's. */
  unexpected: boolean;
}

/** Body-parser and Koa errors carry `status`/`statusCode` and `expose`. */
interface ClientError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (error instanceof HttpError) return { status: error.status, body: { code: error.code, message: error.message }, headers: error.headers, unexpected: false };
  if (error instanceof RateLimitedError) {
    return { status: 429, body: { code: error.code, message: error.message }, headers: { 'retry-after': String(error.retryAfterSeconds) }, unexpected: false };
  }
  if (error instanceof DomainError) {
    const body = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}), ...error.details() };
    // A passing state: say when to come back (read models catch up within a moment).
    const headers: Record<string, string> = error.kind === 'unavailable' ? { 'retry-after': '1' } : {};
    return { status: STATUS_OF_KIND[error.kind], body, headers, unexpected: false };
  }
  if (error instanceof InvalidCursorError) return { status: 400, body: { code: 'invalid_cursor', message: error.message }, headers: {}, unexpected: false };
  // The provider's fault (or a checkout it lost), never the client's: 502, not the provider's own status. Logged: someone should look.
  if (error instanceof PaymentProviderError || error instanceof ProviderCheckoutNotFoundError) {
    return { status: 502, body: { code: 'payment_provider_error', message: 'the payment provider refused or could not be reached; try again later' }, headers: {}, unexpected: true };
  }
  // The deployment's configuration, not the client: the message says what the operator sets.
  if (error instanceof SpeechNotConfiguredError) return { status: 503, body: { code: 'configuration_error', message: error.message }, headers: {}, unexpected: false };
  // The speech server's fault: logged, and told as such (its own status is not the client's).
  if (error instanceof SpeechProviderError) {
    return { status: 502, body: { code: 'speech_unavailable', message: `the speech server gave no usable answer (${error.reason}); try again later` }, headers: {}, unexpected: true };
  }
  const clientError = error as ClientError;
  const status = clientError?.status ?? clientError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return { status, body: clientErrorBody(status, clientError), headers: {}, unexpected: false };
  }
  return { status: 500, body: { code: 'internal_error', message: 'Internal server error' }, headers: {}, unexpected: true };
}

function clientErrorBody(status: number, error: ClientError): { code: string; message: string } {
  switch (status) {
    case 413:
      return { code: 'payload_too_large', message: 'the request body is larger than the limit' };
    case 415:
      return { code: 'unsupported_media_type', message: 'send the body as application/json' };
    case 400:
      if (error.type === 'entity.parse.failed' || /json/i.test(error.message ?? '')) return { code: 'malformed_json', message: 'the request body is not valid JSON' };
      return { code: 'bad_request', message: error.expose && error.message ? error.message : 'bad request' };
    default:
      return { code: 'bad_request', message: error.expose && error.message ? error.message : 'bad request' };
  }
}
