import { expect } from 'chai';
import { LogMailer } from '../../infrastructure/mail/log-mailer';
import type { Logger } from '../../application/ports/logger';

function recordingLogger(lines: object[]): Logger {
  const logger: Logger = {
    debug: () => undefined,
    info: (fields) => void lines.push(fields),
    warn: () => undefined,
    error: () => undefined,
    child: () => logger,
    isLevelEnabled: () => true,
  };
  return logger;
}

describe('log mailer (the embedded default)', () => {
  it('prints the whole email in development, so a developer can read the code', async () => {
    const lines: object[] = [];
    await new LogMailer(recordingLogger(lines), true).send({ to: 'a@example.com', subject: 'Verify', text: 'code 123456' }, 'key-1');
    expect(lines).to.deep.equal([{ to: 'a@example.com', subject: 'Verify', text: 'code 123456', idempotency_key: 'key-1' }]);
  });

  it('leaves the body out of the log elsewhere: it may hold a one-time code', async () => {
    const lines: object[] = [];
    await new LogMailer(recordingLogger(lines), false).send({ to: 'a@example.com', subject: 'Verify', text: 'code 123456' }, 'key-1');
    expect(JSON.stringify(lines)).to.not.contain('123456');
  });
});
