// The port for sending a text message to a WhatsApp user from a tenant's business number, and
// for fetching the media (a voice note) one sent (MediaSource).
// Adapters (adapters/messaging): the WhatsApp Cloud API (a POST to Meta's Graph API with the
// tenant's access token) and the embedded outbox (the message is kept for the super admin to
// read, and sent nowhere). Which one a reply goes through is the application's rule
// (application/whatsapp/reply-delivery.ts): the outbox when the tenant has no access token or
// WHATSAPP_OUTBOX=true.

/** The tenant's business number as the Cloud API addresses it, with the credential to send from it. */
export interface BusinessNumber {
  phone_number_id: string;
  /** In clear: it never leaves the call, and never appears in an error. Null: the tenant has none (the outbox needs none). */
  access_token: string | null;
  /** The Graph API version of the request path (`v23.0`). */
  api_version: string;
}

export interface TextMessage {
  from: BusinessNumber;
  /** The recipient's WhatsApp id (their phone number, digits). */
  to: string;
  text: string;
}

/** What the transport did with the message. */
export type MessagingReceipt =
  | { outcome: 'sent'; transport: string; provider_message_id: string | null; status_code: number }
  /** The embedded outbox kept it: nothing was sent. */
  | { outcome: 'kept'; transport: 'outbox' };

/**
 * The message was not taken. `permanent`: the provider refused it in a way a retry cannot
 * change (a bad token, a recipient outside the 24-hour window, a malformed number); otherwise
 * (no answer, a time-out, 429, 5xx) a later attempt may succeed.
 */
export class MessagingError extends Error {
  constructor(
    message: string,
    readonly statusCode: number | null,
    readonly permanent: boolean,
  ) {
    super(message);
    this.name = 'MessagingError';
  }
}

/** Media a WhatsApp user sent (a voice note), as downloaded: its bytes and the media type Meta gave. */
export interface DownloadedMedia {
  bytes: Buffer;
  mime_type: string | null;
}

/**
 * Where the media of inbound messages are fetched from, with the business number's token: the
 * Cloud API (the embedded outbox has none). Rejects with MessagingError: `permanent` when a
 * retry cannot help (no token, a refusal, media larger than `maxBytes`).
 */
export interface MediaSource {
  downloadMedia(from: BusinessNumber, mediaId: string, maxBytes: number): Promise<DownloadedMedia>;
}

export interface Messaging {
  /** The transport's name, recorded with what it sent (`cloud_api`, `outbox`). */
  readonly transport: string;
  /** Sends `text` to `to` from the business number; rejects with MessagingError when it was not taken. */
  sendText(message: TextMessage): Promise<MessagingReceipt>;
}
