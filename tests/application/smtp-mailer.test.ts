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
