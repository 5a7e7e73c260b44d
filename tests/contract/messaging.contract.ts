// The Messaging contract, run against every adapter: a text message to a recipient from a
// tenant's business number is taken, and the receipt names the adapter's transport and what it
// did (sent, with the provider's message id when it gives one; or kept, for the outbox).

import { expect } from 'chai';
import type { Messaging, TextMessage } from '../../application/ports/messaging';

export interface MessagingFixture {
  messaging: Messaging;
  /** What a message taken by this adapter comes to. */
  expected: 'sent' | 'kept';
  dispose(): Promise<void>;
}

export const MESSAGE: TextMessage = {
  from: { phone_number_id: '106540352242922', access_token: 'EAAJB0contracttoken0123456789abcdef', api_version: 'v23.0' },
  to: '16505551234',
  text: 'It comes in blue and green. Anything else?',
};

export function messagingContract(createFixture: () => Promise<MessagingFixture>): void {
  let fixture: MessagingFixture;
  beforeEach(async () => {
    fixture = await createFixture();
  });
  afterEach(() => fixture.dispose());

  it('takes a text message, and says through which transport and what became of it', async () => {
    const receipt = await fixture.messaging.sendText(MESSAGE);
    expect(receipt.outcome).to.equal(fixture.expected);
    expect(receipt.transport).to.equal(fixture.messaging.transport);
  });

  it('takes every message it is given: a message sent twice is two messages (dedupe is the caller’s)', async () => {
    const first = await fixture.messaging.sendText(MESSAGE);
    const second = await fixture.messaging.sendText(MESSAGE);
    expect([first.outcome, second.outcome]).to.deep.equal([fixture.expected, fixture.expected]);
  });

  it('takes a text of any Unicode, line breaks and emoji included', async () => {
    const receipt = await fixture.messaging.sendText({ ...MESSAGE, text: 'Grüße aus Köln 👋\nZweite Zeile — «ok»' });
    expect(receipt.outcome).to.equal(fixture.expected);
  });
}
