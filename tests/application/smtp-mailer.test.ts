// The SMTP adapter against a real SMTP server on loopback (smtp-server), alone and through
// the mail delivery saga of a running platform.

import { expect } from 'chai';
import { SmtpMailer } from '../../infrastructure/mail/smtp-mailer';
import { REGISTER, PASSWORD, gql } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { startSmtpServer } from '../support/smtp';
import { eventually } from '../support/stores';

describe('SMTP mailer', () => {
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  before(async () => {
    smtp = await startSmtpServer();
  });
  after(() => smtp.close());

  it('delivers an email with its idempotency key as Message-ID', async () => {
    const mailer = new SmtpMailer(smtp.url, 'svc <no-reply@svc.test>');
    try {
      const { messageId } = await mailer.send({ to: 'ada@example.com', subject: 'Hello', text: 'Body text' }, 'mail_delivery:event-1');
      expect(messageId).to.equal('<mail_delivery.event-1@svc.test>');
      expect(smtp.received).to.have.length(1);
      expect(smtp.received[0].to).to.deep.equal(['ada@example.com']);
      expect(smtp.received[0].raw).to.contain('Subject: Hello').and.contain('Body text');
    } finally {
      mailer.close();
    }
  });

  it('sends the one-click unsubscribe headers (RFC 8058) of an email that has a link, and none otherwise', async () => {
    const mailer = new SmtpMailer(smtp.url, 'svc <no-reply@svc.test>');
    try {
      const link = 'https://svc.example.test/notifications/unsubscribe?token=eyJ.0123';
      await mailer.send({ to: 'grace@example.com', subject: 'Alert', text: 'Body', unsubscribeUrl: link }, 'mail_delivery:event-2');
      await mailer.send({ to: 'linus@example.com', subject: 'Code', text: 'Body' }, 'mail_delivery:event-3');
      // Header lines unfolded (RFC 5322 2.2.3): nodemailer folds a long one.
      const [alert, code] = ['grace@example.com', 'linus@example.com'].map((to) => smtp.received.find((mail) => mail.to.includes(to))!.raw.replace(/\r\n(?=[ \t])/g, ''));
      expect(alert).to.contain(`List-Unsubscribe: <${link}>`).and.contain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
      expect(code).not.to.match(/List-Unsubscribe/i);
    } finally {
      mailer.close();
    }
  });

  it('rejects when the server cannot be reached', async () => {
    const mailer = new SmtpMailer('smtp://127.0.0.1:1', 'svc <no-reply@svc.test>');
    try {
      await mailer.send({ to: 'x@example.com', subject: 's', text: 't' }, 'k').then(
        () => expect.fail('expected a rejection'),
        (error: Error) => expect(error.message).to.match(/ECONNREFUSED|connect/),
      );
    } finally {
      mailer.close();
    }
  });

  describe('through the mail delivery saga', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', SMTP_URL: smtp.url, SMTP_FROM: 'svc <no-reply@svc.test>' }, { sagaRetryPollMs: 20 });
    });
    after(() => server.close());

    it('sends the verification email of a registration and records EmailSent', async () => {
      await gql(server, REGISTER, { email: 'smtp-user@example.com', password: PASSWORD, name: 'S', organization_name: 'Smtp Org' });
      await eventually(() => smtp.received.some((mail) => mail.to.includes('smtp-user@example.com')), 10_000, 'the email');
      const mail = smtp.received.find((message) => message.to.includes('smtp-user@example.com'))!;
      expect(mail.raw).to.match(/verification code is \d{6}/);
      await eventually(async () => (await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['EmailSent'] } })).length > 0, 10_000, 'EmailSent');
    });
  });
});
