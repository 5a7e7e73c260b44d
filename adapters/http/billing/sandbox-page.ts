// The sandbox payment provider's hosted checkout page, served by the platform under
// /billing/sandbox/ (the sandbox stands in for a real provider's own website). Public: the
// unguessable checkout id in the path is the only key, as with a real provider's checkout
// links. A small HTML form, no script: the plan, amount and interval; card number, expiry
// and CVC; Pay, and Cancel back to the checkout's cancel URL. Everything rendered is
// escaped by the `html` template below, and the page forbids framing and every outside
// resource.
//
// Answers: the page (200); paid -> 303 to the success URL; declined -> 402, the page with
// the refusal, to try another card; not a test card or a bad expiry/CVC -> 400, the page
// with the problems and nothing charged or sent; already paid -> 409; expired -> 410;
// unknown checkout -> 404 (always, when the platform uses Stripe instead of the sandbox).

import Router from '@koa/router';
import type { Context } from 'koa';
import type { CardEntry, CardField, SandboxCheckoutPages, SandboxCheckoutView, SandboxTestCardDescription } from '../../../application/ports/sandbox-checkout';
import { formBody, formField, formOf } from '../bodies/form';
import { type Html, answerStandalonePage, html, linkable, standalonePage, styleOnlyPolicy } from '../html';
import type { RequestState } from '../middleware/request-context';

export const SANDBOX_PAGE_PREFIX = '/billing/sandbox';

// ------------------------------------------------------------------------------- rendering

/** Minor units in the currency's own decimals ($19.00, ¥1,900); an unknown code is shown as it is. */
export function formattedAmount(amount: number, currency: string): string {
  try {
    const format = new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() });
    return format.format(amount / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    return `${amount} ${currency.toUpperCase()} (minor units)`;
  }
}

const STYLE = `
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:28rem;margin:2rem auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 4px #0002}
.badge{display:inline-block;background:#fff4d6;color:#7a5200;border-radius:4px;padding:.2rem .5rem;font-size:.85rem}
.amount{font-size:2rem;margin:.2rem 0}.amount span{font-size:1rem;color:#5b6475}
label{display:block;margin-top:1rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #c4c9d4;border-radius:4px}
input[aria-invalid=true]{border-color:#c0262d}
.row{display:flex;gap:1rem}.row>div{flex:1}
.field-error,.alert{color:#c0262d}
.alert{background:#fdecec;border-radius:4px;padding:.6rem}
.notice{background:#e8f5ec;color:#1d5f32;border-radius:4px;padding:.6rem}
button{margin-top:1.5rem;width:100%;padding:.8rem;font-size:1rem;background:#3b5bdb;color:#fff;border:0;border-radius:4px;cursor:pointer}
.cards{margin-top:2rem;font-size:.9rem;color:#5b6475}code{font-size:.95em}
`;

/** Inline style allowed by its hash, and nothing else: no script, no outside resource, no framing. */
const CONTENT_SECURITY_POLICY = styleOnlyPolicy(STYLE);

function layout(title: string, content: Html): Html {
  return standalonePage(title, STYLE, html`<p class="badge">Sandbox: test payments only, no money moves</p>
${content}`);
}

const intervalWords = (interval: SandboxCheckoutView['interval']): string => (interval === 'month' ? 'per month' : 'per year');

interface FormState {
  card: Omit<CardEntry, 'cvc'>;
  problems: ReadonlyArray<{ field: CardField; message: string }>;
  decline: { failure_code: string; failure_message: string } | null;
}

const EMPTY_FORM: FormState = { card: { card_number: '', expiry: '' }, problems: [], decline: null };

function field(id: CardField, label: string, value: string, attributes: { inputmode: string; autocomplete: string; placeholder: string }, state: FormState): Html {
  const problem = state.problems.find((entry) => entry.field === id);
  return html`<label for="${id}">${label}</label>
<input id="${id}" name="${id}" value="${value}" inputmode="${attributes.inputmode}" autocomplete="${attributes.autocomplete}" placeholder="${attributes.placeholder}" required${problem ? html` aria-invalid="true" aria-describedby="${id}-error"` : null}>
${problem ? html`<p class="field-error" id="${id}-error">${problem.message}</p>` : null}`;
}

function checkoutPage(checkout: SandboxCheckoutView, testCards: readonly SandboxTestCardDescription[], state: FormState): Html {
  const amount = formattedAmount(checkout.amount, checkout.currency);
  const decline = state.decline ?? (state.problems.length === 0 ? checkout.last_failure : null);
  return layout(
    `Pay ${amount} for ${checkout.plan_name}`,
    html`<h1>${checkout.plan_name}</h1>
<p class="amount" id="amount">${amount} <span id="interval">${intervalWords(checkout.interval)}</span></p>
${checkout.customer_email ? html`<p>Billed to ${checkout.customer_email}</p>` : null}
${decline ? html`<p class="alert" role="alert" id="decline">${decline.failure_message} (<code>${decline.failure_code}</code>) Try another card.</p>` : null}
${state.problems.length > 0 ? html`<p class="alert" role="alert" id="problems">Nothing was charged: check the card details below.</p>` : null}
<form method="post" novalidate>
${field('card_number', 'Card number', state.card.card_number, { inputmode: 'numeric', autocomplete: 'cc-number', placeholder: '4242 4242 4242 4242' }, state)}
<div class="row">
<div>${field('expiry', 'Expiry (MM/YY)', state.card.expiry, { inputmode: 'numeric', autocomplete: 'cc-exp', placeholder: 'MM/YY' }, state)}</div>
<div>${field('cvc', 'CVC', '', { inputmode: 'numeric', autocomplete: 'cc-csc', placeholder: '123' }, state)}</div>
</div>
<button type="submit" id="pay">Pay ${amount}</button>
</form>
${linkable(checkout.cancel_url) ? html`<p><a id="cancel" href="${checkout.cancel_url}">Cancel and return</a></p>` : null}
<section class="cards">
<h2>Test cards</h2>
<ul>${testCards.map((card) => html`<li><code>${card.number}</code> ${card.description}</li>`)}</ul>
<p>Any other number is refused before anything is charged. Any month still to come does for the expiry, and any 3 digits for the CVC.</p>
</section>`,
  );
}

function paidPage(successUrl: string): Html {
  return layout(
    'Checkout paid',
    html`<h1>Paid</h1>
<p class="notice" id="paid">This checkout has been paid. It cannot be paid again.</p>
${linkable(successUrl) ? html`<p><a id="continue" href="${successUrl}">Continue</a></p>` : null}`,
  );
}

function messagePage(title: string, message: string, link: { href: string; text: string } | null = null): Html {
  return layout(title, html`<h1>${title}</h1><p id="message">${message}</p>${link && linkable(link.href) ? html`<p><a href="${link.href}">${link.text}</a></p>` : null}`);
}

// The form has no action: it posts to the page's own URL, whatever prefix (PUBLIC_URL behind
// a proxy) or trailing slash that URL has.
function answer(ctx: Context, status: number, page: Html): void {
  answerStandalonePage(ctx, status, page, CONTENT_SECURITY_POLICY);
}

// ---------------------------------------------------------------------------------- routes

const NOT_IN_USE = messagePage('No such checkout', 'The sandbox payment provider is not in use on this platform.');
const NOT_FOUND = messagePage('No such checkout', 'There is no checkout at this address.');
const EXPIRED = messagePage('Checkout expired', 'This checkout has expired. Start a new one from the billing page.');

/** The checkout id in the path: anything unlike one is no checkout, and never reaches the store. */
const CHECKOUT_ID = /^[A-Za-z0-9_]{1,100}$/;

export function sandboxCheckoutPageRouter(pages: SandboxCheckoutPages | null): Router<RequestState> {
  const router = new Router<RequestState>({ prefix: SANDBOX_PAGE_PREFIX });

  router.get('/checkout/:id', async (ctx) => {
    if (!pages) return answer(ctx, 404, NOT_IN_USE);
    const checkout = CHECKOUT_ID.test(ctx.params.id) ? await pages.view(ctx.params.id) : null;
    if (!checkout) return answer(ctx, 404, NOT_FOUND);
    if (checkout.status === 'paid') return answer(ctx, 200, paidPage(checkout.success_url));
    if (checkout.status === 'expired') return answer(ctx, 410, EXPIRED);
    answer(ctx, 200, checkoutPage(checkout, pages.testCards, EMPTY_FORM));
  });

  router.post('/checkout/:id', formBody({ limitBytes: 16 * 1024, maxFields: 10 }), async (ctx) => {
    if (!pages) return answer(ctx, 404, NOT_IN_USE);
    if (!CHECKOUT_ID.test(ctx.params.id)) return answer(ctx, 404, NOT_FOUND);
    const form = formOf(ctx);
    const card: CardEntry = { card_number: formField(form, 'card_number'), expiry: formField(form, 'expiry'), cvc: formField(form, 'cvc') };
    const outcome = await pages.pay(ctx.params.id, card);
    switch (outcome.outcome) {
      case 'paid':
        ctx.status = 303;
        return ctx.redirect(outcome.redirect_to);
      case 'not_found':
        return answer(ctx, 404, NOT_FOUND);
      case 'expired':
        return answer(ctx, 410, EXPIRED);
      case 'already_paid':
        return answer(ctx, 409, paidPage(outcome.success_url));
      case 'invalid':
      case 'declined': {
        const checkout = await pages.view(ctx.params.id);
        if (!checkout) return answer(ctx, 404, NOT_FOUND);
        const state: FormState = {
          // The CVC is never sent back; a refused number is shown again so it can be corrected.
          card: { card_number: card.card_number.slice(0, 40), expiry: card.expiry.slice(0, 10) },
          problems: outcome.outcome === 'invalid' ? outcome.problems : [],
          decline: outcome.outcome === 'declined' ? { failure_code: outcome.failure_code, failure_message: outcome.failure_message } : null,
        };
        return answer(ctx, outcome.outcome === 'invalid' ? 400 : 402, checkoutPage(checkout, pages.testCards, state));
      }
    }
  });

  return router;
}
