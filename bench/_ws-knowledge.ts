// The knowledge of the ws bench (bench/ws.ts): a support site's documents and the visitors'
// questions, the same for the platform and the bare reference.

/** A support site's pages: each document a topic, a few paragraphs. */
const TOPICS: Array<[string, string[]]> = [
  ['Refunds', ['Refunds are issued within 14 days of the request, to the card you paid with.', 'Gift cards cannot be returned or refunded once they have been activated.', 'A refund for a damaged parcel needs a photo of the damage.']],
  ['Shipping', ['Orders ship from our warehouse in Lyon within two business days of payment.', 'Delivery to Canada costs 19 euros and takes five to eight business days.', 'Parcels over 30 kg travel by freight and are delivered by appointment.']],
  ['Opening hours', ['The office is open Monday to Friday from 9:00 to 17:00, closed on public holidays.', 'The phone line answers from 8:00 to 18:00 on weekdays.', 'Chat support answers around the clock.']],
  ['Warranty', ['Every product carries a two-year warranty covering manufacturing defects.', 'The warranty does not cover wear, misuse or accidental damage.', 'A warranty claim needs the order number and a description of the fault.']],
  ['Accounts', ['You can change your password from the account page at any time.', 'Two-factor authentication can be turned on under security settings.', 'A deleted account cannot be restored after thirty days.']],
  ['Payments', ['We accept cards, bank transfers and invoices for business customers.', 'Invoices are payable within thirty days.', 'Prices include VAT for customers in the European Union.']],
];

export const QUESTIONS = [
  'How long do refunds take?',
  'Can I return a gift card?',
  'Where do orders ship from?',
  'How much does delivery to Canada cost?',
  'What are the opening hours of the office?',
  'Is the warranty two years?',
  'How do I turn on two-factor authentication?',
  'Which payment methods do you accept?',
  'What is the weather in Paris?',
];

/** The documents indexed: `count` of them, cycling through the topics, each a few paragraphs. */
export function documentsOf(count: number): Array<{ title: string; text: string }> {
  return Array.from({ length: count }, (_, n) => {
    const [title, sentences] = TOPICS[n % TOPICS.length];
    const paragraphs = Array.from({ length: 4 }, (_, k) => sentences.map((_, s) => sentences[(s + k) % sentences.length]).join(' '));
    return { title: n < TOPICS.length ? title : `${title} ${Math.floor(n / TOPICS.length) + 1}`, text: `# ${title}\n\n${paragraphs.join('\n\n')}\n` };
  });
}

