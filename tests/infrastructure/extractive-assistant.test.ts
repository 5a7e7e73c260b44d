import { expect } from 'chai';
import type { AssistantChunk, AssistantRequest, Passage } from '../../application/ports/assistant-engine';
import { AssistantEngineError } from '../../application/ports/assistant-engine';
import { EXTRACTIVE_MODEL, ExtractiveAssistantEngine, asksToAct, meaningfulTerms } from '../../infrastructure/assistant/extractive';

const passage = (id: string, title: string, text: string, heading: string | null = null): Passage => ({ id, document_id: `doc-${title}`, chunk_id: `chunk-${id}`, title, heading, text });

const REFUNDS = passage(
  '1',
  'Refund policy',
  'We want you to be happy with your order. Refunds are issued within 14 days of the request, to the card you paid with. Shipping costs are not refunded.\nGift cards cannot be refunded.',
);
const SHIPPING = passage('2', 'Shipping', 'Orders ship from Lyon within two business days. Delivery to Canada takes 5 to 8 days.');
const OFFICE = passage('3', 'Office', 'Our office is open Monday to Friday, 9:00 to 17:00. The kitchen is cleaned on Fridays.');

async function ask(question: string, passages: readonly Passage[], extra: Partial<AssistantRequest> = {}): Promise<{ text: string; done: Extract<AssistantChunk, { kind: 'done' }>; chunks: AssistantChunk[] }> {
  const chunks: AssistantChunk[] = [];
  const request: AssistantRequest = { assistant: { name: 'Ava', instructions: '', language: 'en' }, history: [], question, passages, ...extra };
  for await (const chunk of new ExtractiveAssistantEngine().answer(request)) chunks.push(chunk);
  const done = chunks[chunks.length - 1];
  if (done.kind !== 'done') throw new Error('no done chunk last');
  expect(chunks.filter((chunk) => chunk.kind === 'done')).to.have.length(1);
  return { text: chunks.flatMap((chunk) => (chunk.kind === 'delta' ? [chunk.text] : [])).join(''), done, chunks };
}

describe('extractive assistant engine (the embedded default)', () => {
  it('answers with the matching sentences of the passage, quoted word for word and cited', async () => {
    const { text, done } = await ask('How long do refunds take?', [REFUNDS, OFFICE]);
    expect(text).to.equal(
      'Here is what the knowledge base says:\n\nFrom "Refund policy" [1]:\n> Refunds are issued within 14 days of the request, to the card you paid with.\n> Shipping costs are not refunded.',
    );
    expect(done).to.deep.equal({ kind: 'done', model: EXTRACTIVE_MODEL, cited: ['1'], answered_from_knowledge: true, usage: null });
  });

  it('quotes only text the passages hold', async () => {
    const { text } = await ask('Can I get a refund on a gift card, and how fast do orders ship to Canada?', [REFUNDS, SHIPPING, OFFICE]);
    const quoted = text.split('\n').filter((line) => line.startsWith('> ')).map((line) => line.slice(2));
    expect(quoted).to.not.be.empty;
    for (const sentence of quoted) expect([REFUNDS, SHIPPING].some((p) => p.text.includes(sentence)), sentence).to.equal(true);
  });

  it('cites every passage it quotes, in the order retrieval ranked them, each once', async () => {
    const { text, done } = await ask('Can I get a refund on a gift card, and how fast do orders ship to Canada?', [SHIPPING, REFUNDS, OFFICE]);
    expect(done.cited).to.deep.equal(['2', '1']);
    expect(text.indexOf('[2]')).to.be.lessThan(text.indexOf('[1]'));
    expect(text).to.not.contain('[3]');
    expect(text).to.contain('> Delivery to Canada takes 5 to 8 days.');
    expect(text).to.contain('> Gift cards cannot be refunded.');
  });

  it('matches words in other forms and without accents', async () => {
    expect(meaningfulTerms('Refunded shipping')).to.deep.equal(meaningfulTerms('refunds SHIP'));
    expect(meaningfulTerms('Rückerstattung')).to.deep.equal(meaningfulTerms('ruckerstattung'));
    const { done } = await ask('refunding', [REFUNDS]);
    expect(done.cited).to.deep.equal(['1']);
  });

  it('quotes the opening of a passage that matches by its title or heading only', async () => {
    const { text, done } = await ask('office', [passage('1', 'Office', 'Open Monday to Friday. Closed on holidays.', 'Opening hours')]);
    expect(done.cited).to.deep.equal(['1']);
    expect(text).to.contain('From "Office, Opening hours" [1]:\n> Open Monday to Friday.');
  });

  it('says plainly that the knowledge base has nothing when no passage shares a meaningful word', async () => {
    for (const [question, passages] of [
      ['What is the weather like in Paris today?', [REFUNDS, SHIPPING, OFFICE]],
      ['How long do refunds take?', []],
      ['What is it?', [REFUNDS]],
    ] as Array<[string, Passage[]]>) {
      const { text, done } = await ask(question, passages);
      expect(text, question).to.equal('I could not find anything about this in the knowledge base, so I cannot answer it from there. Try other words, or ask a person.');
      expect(done, question).to.deep.include({ cited: [], answered_from_knowledge: false, model: EXTRACTIVE_MODEL });
    }
  });

  it("speaks the tenant's language where it knows it, English otherwise", async () => {
    expect((await ask('remboursement', [], { assistant: { name: 'Ava', instructions: '', language: 'fr-FR' } })).text).to.match(/^Je n'ai rien trouvé/);
    expect((await ask('refunds', [REFUNDS], { assistant: { name: 'Ava', instructions: '', language: 'de' } })).text).to.match(/^Das steht dazu in der Wissensdatenbank:\n\nAus „Refund policy“ \[1\]:/);
    expect((await ask('refunds', [REFUNDS], { assistant: { name: 'Ava', instructions: '', language: 'xx' } })).text).to.match(/^Here is what the knowledge base says:/);
  });

  it('cuts an overlong sentence with an ellipsis rather than quoting a wall of text', async () => {
    const long = `Refunds ${'and more words '.repeat(60)}end`;
    const { text } = await ask('refunds', [passage('1', 'Long', long)]);
    const quote = text.split('\n').find((line) => line.startsWith('> '))!;
    expect(quote.endsWith('…')).to.equal(true);
    expect(long.startsWith(quote.slice(2, -1))).to.equal(true);
  });

  it('is deterministic', async () => {
    const first = await ask('refunds and shipping to Canada', [REFUNDS, SHIPPING, OFFICE]);
    const second = await ask('refunds and shipping to Canada', [REFUNDS, SHIPPING, OFFICE]);
    expect(second.chunks).to.deep.equal(first.chunks);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const engine = new ExtractiveAssistantEngine();
    const iterator = engine.answer({ assistant: { name: 'Ava', instructions: '', language: 'en' }, history: [], question: 'refunds shipping', passages: [REFUNDS, SHIPPING], signal: controller.signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).to.deep.equal({ kind: 'delta', text: 'Here is what the knowledge base says:' });
    controller.abort();
    try {
      await iterator.next();
      expect.fail('expected the engine to stop');
    } catch (error) {
      expect(error).to.be.instanceOf(AssistantEngineError);
      expect((error as AssistantEngineError).code).to.equal('cancelled');
    }
  });

  describe('tools: it never calls one, and says so when asked to act', () => {
    const TOOLS = [
      { name: 'cancel_order', description: 'Cancels an order', parameters: { type: 'object' } },
      { name: 'orderStatus', description: "Looks up an order's status", parameters: { type: 'object' } },
    ];
    const CANNOT_ACT = 'I cannot take actions or look things up in your systems here: no language model is configured for this assistant, so it can only quote the knowledge base.';

    it('tells an action verb, or every word of an offered tool name, from a question about knowledge', () => {
      expect(asksToAct('Please cancel my order A-17', TOOLS)).to.equal(true);
      expect(asksToAct('Could you book a delivery slot for Friday?', TOOLS)).to.equal(true);
      expect(asksToAct('Changing my address, how?', TOOLS)).to.equal(true);
      expect(asksToAct('What is the status of order A-17?', TOOLS)).to.equal(true);
      expect(asksToAct('How long do refunds take?', TOOLS)).to.equal(false);
      expect(asksToAct('Where do orders ship from?', TOOLS)).to.equal(false);
      // Without tools nothing is an action it could have taken.
      expect(asksToAct('Please cancel my order A-17', [])).to.equal(false);
    });

    it('asked to act with tools offered: says plainly it cannot, then answers from the passages; never a tool call', async () => {
      const { text, done, chunks } = await ask('Please cancel my order and tell me how long refunds take', [REFUNDS], { tools: TOOLS });
      expect(text.startsWith(`${CANNOT_ACT}\n\nHere is what the knowledge base says:`), text).to.equal(true);
      expect(text).to.contain('> Refunds are issued within 14 days of the request');
      expect(done).to.deep.include({ cited: ['1'], answered_from_knowledge: true });
      expect(chunks.map((chunk) => chunk.kind)).to.not.include('tool_calls');
    });

    it('asked to act with nothing relevant known: the sentence and the plain no-answer reply, in the tenant language', async () => {
      expect((await ask('What is the status of my order?', [OFFICE], { tools: TOOLS })).text).to.equal(
        `${CANNOT_ACT}\n\nI could not find anything about this in the knowledge base, so I cannot answer it from there. Try other words, or ask a person.`,
      );
      expect((await ask('cancel', [], { tools: TOOLS, assistant: { name: 'Ava', instructions: '', language: 'fr' } })).text).to.match(/^Je ne peux pas effectuer d'actions/);
    });

    it('says nothing of actions when the question asks none, or when no tool is offered', async () => {
      expect((await ask('How long do refunds take?', [REFUNDS], { tools: TOOLS })).text).to.match(/^Here is what the knowledge base says:/);
      expect((await ask('Please cancel my order', [REFUNDS])).text).to.not.contain('cannot take actions');
    });
  });
});
