// pino JSON logs. Secrets are redacted by path wherever they might ride along, so a careless
// `logger.info({ headers })` still leaks nothing.

import pino from 'pino';
import type { Logger } from '../../application/ports/logger';

export const REDACTED_PATHS = [
  'password',
  '*.password',
  'new_password',
  '*.new_password',
  'secret',
  '*.secret',
  'signing_secret',
  '*.signing_secret',
  'credential',
  '*.credential',
  'token',
  '*.token',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-svc-signature"]',
  // The end user's credentials in the tenant's own systems, sent to the chat routes.
  'headers["x-end-user-token"]',
  'headers["x-end-user-session"]',
  '*.headers["x-end-user-token"]',
  '*.headers["x-end-user-session"]',
  'req.headers["x-end-user-token"]',
  'req.headers["x-end-user-session"]',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc-platform' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  ) as unknown as Logger;
}
