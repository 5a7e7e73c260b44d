// The form of an address a tenant gives the platform to call (its handoff webhook, its CRM,
// later its connector): checked the same way everywhere. Whether the platform may call it at
// all (https only, no private address) depends on the deployment and on name resolution, so
// the outbound guard of the application checks that when the address is given and again on
// every call.

import { type DomainError, invalid } from './errors';

export const MAX_ENDPOINT_URL_LENGTH = 2048;

/**
 * Why `url` cannot be an endpoint, or null: an absolute http(s) URL of at most 2048
 * characters, with a host, and without user name or password (they would be shown to every
 * admin reading the configuration; a signature or credential authenticates instead).
 */
export function endpointUrlProblem(url: string, field = 'url'): DomainError | null {
  if (url.length === 0 || url.length > MAX_ENDPOINT_URL_LENGTH) return invalid('invalid_url', `${field}: expected a URL of 1 to ${MAX_ENDPOINT_URL_LENGTH} characters`, field);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return invalid('invalid_url', `${field}: expected an absolute URL such as https://helpdesk.example.com/hooks/handoff`, field);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return invalid('invalid_url', `${field}: expected an https:// URL, not ${parsed.protocol}`, field);
  if (parsed.hostname === '') return invalid('invalid_url', `${field}: the URL names no host`, field);
  if (parsed.username !== '' || parsed.password !== '') return invalid('invalid_url', `${field}: a URL with a user name or password is refused`, field);
  return null;
}
