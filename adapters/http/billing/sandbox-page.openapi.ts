// OpenAPI description of the sandbox payment provider's hosted checkout page (sandbox-page.ts).

import type { ApiArea, Schema } from '../openapi/describe';

const PAGE = { type: 'text/html', schema: { type: 'string' } as Schema };

export const sandboxCheckoutPageApi: ApiArea = {
  tag: 'billing sandbox',
  description:
    "The embedded sandbox payment provider's hosted checkout page (HTML, no credential: the checkout id in the path is the key). The outcome reaches the platform only as a signed webhook to the checkout's webhook URL; docs/billing.md lists the test cards.",
  routes: {
    '/billing/sandbox/checkout/{id}': {
      get: {
        summary: 'The hosted checkout page',
        description: 'The plan, amount and interval, and a card form; a paid checkout shows that it is paid.',
        access: 'public',
        success: { status: 200, description: 'the page', content: PAGE },
        otherAnswers: {
          '404': { description: 'no such checkout (always, when the platform uses Stripe)', content: PAGE },
          '410': { description: 'the checkout has expired', content: PAGE },
        },
      },
      post: {
        summary: 'Pay with a test card',
        description:
          'The form of the page. `4242 4242 4242 4242` pays; `4000 0000 0000 0002` is declined (`card_declined`) and `4000 0000 0000 9995` too (`insufficient_funds`). Each attempt POSTs a signed webhook (`checkout.paid` or `checkout.payment_failed`) to the checkout\'s webhook URL before the answer.',
        access: 'public',
        body: {
          form: {
            type: 'object',
            properties: { card_number: { type: 'string' }, expiry: { type: 'string', description: 'MM/YY' }, cvc: { type: 'string' } },
            required: ['card_number', 'expiry', 'cvc'],
          },
        },
        success: { status: 303, description: 'paid: the browser goes on to the success URL (`Location`)', content: PAGE },
        otherAnswers: {
          '400': { description: 'not a test card, or a bad expiry or CVC: the page again with the problems; nothing charged, nothing sent', content: PAGE },
          '402': { description: 'declined: the page again with the refusal, to try another card', content: PAGE },
          '404': { description: 'no such checkout (always, when the platform uses Stripe)', content: PAGE },
          '409': { description: 'the checkout is paid already: nothing charged, nothing sent', content: PAGE },
          '410': { description: 'the checkout has expired', content: PAGE },
        },
      },
    },
  },
};
