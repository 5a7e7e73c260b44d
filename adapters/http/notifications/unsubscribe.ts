// GET, POST /notifications/unsubscribe?token=...: the one-click unsubscribe link of the emails a
// person may do without (application/notification/unsubscribe-links.ts). No credential: the
// token is the key.
//
// GET is the page a person reaches from the link in an email's text: it names the
// organization and the emails, and asks; it changes nothing, so a mail scanner that follows
// every link unsubscribes nobody. POST unsubscribes: the page's button, or the mail client's
// one-click request (RFC 8058: `List-Unsubscribe=One-Click`, form-encoded or multipart; the
// body is not needed and not read further). A browser (Accept naming text/html) gets pages,
// every other client JSON, errors as `{code, message}`.

import Router from '@koa/router';
import type { Context } from 'koa';
import { type UnsubscribeLinkDependencies, type UnsubscribeView, readUnsubscribeLink, unsubscribeByLink } from '../../../application/notification/unsubscribe-links';
import { invalid } from '../../../domain/shared/errors';
import { rawBody } from '../bodies/raw';
import { toErrorResponse } from '../errors';
import { type Html, answerStandalonePage, html, standalonePage, styleOnlyPolicy } from '../html';
import type { RequestState } from '../middleware/request-context';
import { requestContextOf } from '../request-context';

const STYLE = `
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1d2330;margin:0}
main{max-width:30rem;margin:2rem auto;background:#fff;border-radius:8px;padding:1.5rem 2rem;box-shadow:0 1px 4px #0002}
button{margin-top:1rem;padding:.7rem 1.2rem;font-size:1rem;background:#3b5bdb;color:#fff;border:0;border-radius:4px;cursor:pointer}
.notice{background:#e8f5ec;color:#1d5f32;border-radius:4px;padding:.6rem}
.alert{background:#fdecec;color:#c0262d;border-radius:4px;padding:.6rem}
.hint{color:#5b6475;font-size:.9rem}
`;
const POLICY = styleOnlyPolicy(STYLE);

const layout = (title: string, content: Html): Html => standalonePage(title, STYLE, content);

const TURN_ON_AGAIN = 'To have them again, sign in and turn them on under your notification settings (PATCH /api/v1/me/notifications).';

// The form has no action: it posts to the page's own URL, token and all, whatever prefix
// (PUBLIC_URL behind a proxy) it has.
const askingPage = (view: UnsubscribeView): Html =>
  layout(
    'Unsubscribe',
    html`<h1>Unsubscribe</h1>
<p id="message">Stop the ${view.emails} from ${view.organization}?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit" id="unsubscribe">Unsubscribe</button></form>
<p class="hint">Only these emails stop, and only from ${view.organization}. ${TURN_ON_AGAIN}</p>`,
  );

const doneText = (view: UnsubscribeView): string => `You will get no more ${view.emails} from ${view.organization}.`;

const unsubscribedPage = (view: UnsubscribeView): Html =>
  layout('Unsubscribed', html`<h1>Unsubscribed</h1><p id="message" class="notice">${doneText(view)}</p><p class="hint">${TURN_ON_AGAIN}</p>`);

function errorPage(status: number, message: string): Html {
  const title = status === 404 ? 'Nothing to unsubscribe from' : status === 429 ? 'Too many attempts' : 'This link is not valid';
  return layout(title, html`<h1>${title}</h1><p id="message" class="alert">${message}</p>`);
}

function tokenOf(ctx: Context): string {
  const token = ctx.query.token;
  if (typeof token !== 'string' || token === '') throw invalid('invalid_request', 'token: expected the token of the link, once, in the query', 'token');
  return token;
}

// A browser names text/html above anything else; a mail client, curl or fetch (any type, or no Accept) gets JSON.
const wantsPage = (ctx: Context): boolean => ctx.accepts('json', 'html') === 'html';

/** Runs `act` and answers what it returns, as a page or as JSON; its error too. */
async function answer(ctx: Context, asPage: boolean, act: () => Promise<{ json: unknown; page: Html }>): Promise<void> {
  if (!asPage) {
    ctx.set('cache-control', 'no-store');
    ctx.set('referrer-policy', 'no-referrer');
    ctx.body = (await act()).json;
    return;
  }
  try {
    const { page } = await act();
    answerStandalonePage(ctx, 200, page, POLICY);
  } catch (error) {
    const response = toErrorResponse(error);
    if (response.unexpected) throw error;
    ctx.set(response.headers);
    answerStandalonePage(ctx, response.status, errorPage(response.status, response.body.message), POLICY);
  }
}

export function unsubscribeRouter(deps: UnsubscribeLinkDependencies): Router<RequestState> {
  const router = new Router<RequestState>({ prefix: '/notifications/unsubscribe' });
  router.get('/', async (ctx) => {
    await answer(ctx, wantsPage(ctx), async () => {
      const view = await readUnsubscribeLink(deps, tokenOf(ctx), requestContextOf(ctx).ip);
      return { json: view, page: view.unsubscribed ? unsubscribedPage(view) : askingPage(view) };
    });
  });
  router.post('/', rawBody({ types: ['application/x-www-form-urlencoded', 'multipart/form-data'], limitBytes: 4096 }), async (ctx) => {
    await answer(ctx, wantsPage(ctx), async () => {
      const view = await unsubscribeByLink(deps, tokenOf(ctx), requestContextOf(ctx));
      return { json: view, page: unsubscribedPage(view) };
    });
  });
  return router;
}
