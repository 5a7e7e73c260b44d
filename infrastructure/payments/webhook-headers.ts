// The signature header of a provider's webhook, read the same way by every adapter.

import { WebhookSignatureError } from '../../application/ports/payment-provider';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The header's one value, found by case-insensitive name (node lowercases them; a caller
 * may not). Absent, empty or sent more than once, there is no signature to trust.
 */
export function signatureHeader(headers: Headers, name: string): string {
  const wanted = name.toLowerCase();
  const values = Object.entries(headers)
    .filter(([key, value]) => key.toLowerCase() === wanted && value !== undefined)
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value as string]));
  if (values.length === 0 || values[0].trim() === '') throw new WebhookSignatureError(`the ${name} header is missing`);
  if (values.length > 1) throw new WebhookSignatureError(`the ${name} header is sent more than once`);
  return values[0];
}
