// The Messaging adapter of the WhatsApp Cloud API: one text message is
//   POST <base>/<version>/<phone_number_id>/messages
//   Authorization: Bearer <access token>
//   {"messaging_product": "whatsapp", "recipient_type": "individual", "to": "<wa_id>", "type": "text", "text": {"preview_url": false, "body": "..."}}
// answered `{"messaging_product": "whatsapp", "contacts": [...], "messages": [{"id": "wamid...."}]}`.
// The base is https://graph.facebook.com unless the operator sets WHATSAPP_GRAPH_BASE_URL (a
// local server speaking the same wire format, in tests). Calls go through the outbound guard.
//
// Meta's answer decides what a failure is: 408, 429 and 5xx (and no answer at all) may pass on a
// retry; any other refusal (a bad token, a recipient outside the 24-hour window, a number not on
// the allowed list) will not, and is permanent. An error names Meta's code and message, never
// the token. The Cloud API takes no idempotency key: an attempt that timed out after Meta took
// it is sent again by the retry (at least once).

import { MessagingError, type Messaging, type MessagingReceipt, type TextMessage } from '../../application/ports/messaging';
import { OutboundCallError, type OutboundHttp } from '../../application/ports/outbound-http';

export const CLOUD_API_TRANSPORT = 'cloud_api';
export const DEFAULT_GRAPH_BASE_URL = 'https://graph.facebook.com';

export interface CloudApiOptions {
  /** `https://graph.facebook.com`, without a trailing slash. */
  baseUrl: string;
  timeoutMs: number;
}

/** Meta's answers are small; a larger one is no answer of the Cloud API. */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_ERROR_LENGTH = 500;

/** Statuses a later attempt may get past. */
const RETRYABLE = (status: number): boolean => status === 408 || status === 429 || status >= 500;

function parsed(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}

/** Meta's id of the message it took, from `messages[0].id`. */
function messageIdOf(answer: unknown): string | null {
  const messages = (answer as { messages?: unknown } | null)?.messages;
  const id = Array.isArray(messages) ? (messages[0] as { id?: unknown } | undefined)?.id : undefined;
  return typeof id === 'string' && id.length > 0 && id.length <= 200 ? id : null;
}

/** `(#131030) Recipient phone number not in allowed list` from Meta's error object, or a plain status. */
function errorOf(status: number, answer: unknown): string {
  const error = (answer as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  const detail = typeof error?.message === 'string' ? `: ${error.message}` : '';
  const code = typeof error?.code === 'number' ? ` (code ${error.code})` : '';
  return `the WhatsApp Cloud API answered HTTP ${status}${code}${detail}`.slice(0, MAX_ERROR_LENGTH);
}

export class WhatsAppCloudApiMessaging implements Messaging {
  readonly transport = CLOUD_API_TRANSPORT;

  constructor(
    private readonly outbound: OutboundHttp,
    private readonly options: CloudApiOptions,
  ) {}

  async sendText(message: TextMessage): Promise<MessagingReceipt> {
    const { phone_number_id, access_token, api_version } = message.from;
    if (access_token === null) throw new MessagingError('the organization has no WhatsApp access token', null, true);
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(api_version)}/${encodeURIComponent(phone_number_id)}/messages`;
    const body = JSON.stringify({ messaging_product: 'whatsapp', recipient_type: 'individual', to: message.to, type: 'text', text: { preview_url: false, body: message.text } });
    let answer;
    try {
      answer = await this.outbound.request({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'svc-platform-whatsapp/1' },
        body,
        timeoutMs: this.options.timeoutMs,
        maxResponseBytes: MAX_ANSWER_BYTES,
      });
    } catch (error) {
      if (error instanceof OutboundCallError) {
        // The guard refusing the configured base is a setting to fix, not a passing failure.
        const permanent = error.reason === 'invalid_url' || error.reason === 'insecure_url' || error.reason === 'private_address';
        throw new MessagingError(`the WhatsApp Cloud API could not be reached: ${error.message}`, null, permanent);
      }
      throw error;
    }
    const content = parsed(answer.body);
    if (answer.status >= 200 && answer.status < 300) return { outcome: 'sent', transport: this.transport, provider_message_id: messageIdOf(content), status_code: answer.status };
    throw new MessagingError(errorOf(answer.status, content), answer.status, !RETRYABLE(answer.status));
  }
}
