/** An email as the mailer sends it. */
export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
}

/** Delivers email: SMTP when SMTP_URL is set; the log in development otherwise. */
export interface Mailer {
  readonly provider: string;
  send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }>;
}
