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
//
// A voice note's audio is fetched in two calls, both with the token: `GET <base>/<version>/<media
// id>` answers `{"url": "https://lookaside.fbsbx.com/...", "mime_type": "audio/ogg", ...}`, and a
// GET of that url answers the bytes (Meta keeps them for 30 days).

import { type BusinessNumber, type DownloadedMedia, type MediaSource, MessagingError, type Messaging, type MessagingReceipt, type TextMessage } from '../../application/ports/messaging';
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

/** The media's url and type from Meta's answer about it. */
function mediaOf(answer: unknown): { url: string; mime_type: string | null } | null {
  const media = answer as { url?: unknown; mime_type?: unknown } | null;
  if (typeof media?.url !== 'string' || !/^https?:\/\//.test(media.url)) return null;
  return { url: media.url, mime_type: typeof media.mime_type === 'string' ? media.mime_type : null };
}

export class WhatsAppCloudApiMessaging implements Messaging, MediaSource {
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

  async downloadMedia(from: BusinessNumber, mediaId: string, maxBytes: number): Promise<DownloadedMedia> {
    const { access_token, api_version } = from;
    if (access_token === null) throw new MessagingError('the organization has no WhatsApp access token', null, true);
    const authorization = `Bearer ${access_token}`;
    const about = await this.get(`${this.options.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(api_version)}/${encodeURIComponent(mediaId)}`, authorization, MAX_ANSWER_BYTES);
    const media = mediaOf(parsed(about.body));
    if (media === null) throw new MessagingError('the WhatsApp Cloud API named no url for the media', about.status, false);
    const file = await this.get(media.url, authorization, maxBytes);
    return { bytes: file.body, mime_type: media.mime_type };
  }

  /** A GET with the token; MessagingError for no answer or a refusal, permanent when a retry cannot help. */
  private async get(url: string, authorization: string, maxBytes: number): Promise<{ status: number; body: Buffer }> {
    let answer;
    try {
      answer = await this.outbound.request({ method: 'GET', url, headers: { authorization, 'user-agent': 'svc-platform-whatsapp/1' }, body: null, timeoutMs: this.options.timeoutMs, maxResponseBytes: maxBytes });
    } catch (error) {
      if (error instanceof OutboundCallError) {
        const permanent = error.reason !== 'network' && error.reason !== 'timeout';
        throw new MessagingError(`the WhatsApp media could not be fetched: ${error.message}`, null, permanent);
      }
      throw error;
    }
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw new MessagingError(errorOf(answer.status, parsed(answer.body)), answer.status, !RETRYABLE(answer.status));
  }
}
