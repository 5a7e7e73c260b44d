/** An email as the mailer sends it. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  /** Sent as List-Unsubscribe with List-Unsubscribe-Post (RFC 8058): mail clients then offer one-click unsubscribe. */
  unsubscribeUrl?: string;
}

/** Delivers email: SMTP when SMTP_URL is set; otherwise the log mailer, which only keeps it in the outbox. */
export interface Mailer {
  readonly provider: string;
  /** Whether `send` hands the email to a transport; false: it is only kept in the outbox, never recorded as sent. */
  readonly delivers: boolean;
  send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }>;
}
