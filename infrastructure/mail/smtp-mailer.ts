// Email over SMTP with nodemailer, when SMTP_URL is set (e.g. smtps://user:pass@mail.example.com).
// nodemailer handles TLS, authentication and the protocol; the idempotency key travels as
// the Message-ID so that a redelivered email is recognisable downstream.

import nodemailer, { type Transporter } from 'nodemailer';
import type { Mailer, OutgoingEmail } from '../../application/ports/mailer';

export class SmtpMailer implements Mailer {
  readonly delivers = true;
  readonly provider = 'smtp';
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(email: OutgoingEmail, idempotencyKey: string): Promise<{ messageId: string | null }> {
    const domain = this.from.replace(/^.*@/, '').replace(/>.*$/, '') || 'localhost';
    const messageId = `<${idempotencyKey.replace(/[^A-Za-z0-9._-]/g, '.')}@${domain}>`;
    // One-click unsubscribe (RFC 8058): the mail client POSTs `List-Unsubscribe=One-Click` to the link.
    const headers = email.unsubscribeUrl === undefined ? undefined : { 'List-Unsubscribe': `<${email.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
    const info = await this.transport.sendMail({ from: this.from, to: email.to, subject: email.subject, text: email.text, messageId, headers });
    return { messageId: typeof info.messageId === 'string' ? info.messageId : messageId };
  }

  close(): void {
    this.transport.close();
  }
}
