// GET /chat/{tenant_slug}: the tenant's public chat page (issue #15). A server-rendered page in
// the tenant's branding (display name, colour, logo) whose chat is widget.js in full-page mode
// with the tenant's publishable widget token: the same code as the embedded widget. An
// unknown, suspended or deleted tenant (or one whose widget is off) gets a 404 page.
//
// Every tenant-supplied value goes through the escaping `html` template; the colour, the one
// value placed in CSS, must be #rrggbb. The page's own style is allowed by its hash in the
// Content-Security-Policy, its only script is widget.js from this platform, and the widget
// talks only to this platform ('self' covers its WebSocket too).

import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { type PublicChatPage, type PublicChatPageDependencies, publicChatPage } from '../../../application/widget/public-chat-page';
import { DomainError } from '../../../domain/shared/errors';
import { Html, html } from '../html';
import type { RequestState } from '../middleware/request-context';

const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;
const DEFAULT_COLOUR = '#2563eb';

function style(colour: string): string {
  const brand = HEX_COLOUR.test(colour) ? colour : DEFAULT_COLOUR;
  return `
html,body{height:100%;margin:0}
body{display:flex;flex-direction:column;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f5f6f8;color:#1d2330}
.brand{display:flex;align-items:center;gap:.75rem;padding:.75rem 1.25rem;background:#fff;border-top:4px solid ${brand};box-shadow:0 1px 3px #0002}
.brand img{height:36px;width:auto;max-width:160px;object-fit:contain}
.brand h1{margin:0;font-size:1.15rem}
main{flex:1;min-height:0;width:100%;max-width:760px;margin:0 auto;background:#fff}
.missing{max-width:32rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002;flex:0 0 auto}
`;
}

function page(options: { title: string; colour: string; scriptSrc?: string }, body: Html): { text: string; csp: string } {
  const css = style(options.colour);
  const csp = [
    "default-src 'none'",
    options.scriptSrc ? "script-src 'self'" : null,
    `style-src 'sha256-${createHash('sha256').update(css).digest('base64')}'`,
    'img-src https:',
    options.scriptSrc ? "connect-src 'self'" : null,
    "base-uri 'none'",
    "form-action 'none'",
  ]
    .filter(Boolean)
    .join('; ');
  const text = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title}</title>
<style>${new Html(css)}</style>
</head>
<body>
${body}
</body>
</html>
`.text;
  return { text, csp };
}

function chatPage(chat: PublicChatPage, scriptSrc: string) {
  return page(
    { title: `Chat with ${chat.display_name}`, colour: chat.primary_color, scriptSrc },
    html`<header class="brand">
${chat.logo_url ? html`<img src="${chat.logo_url}" alt="${chat.display_name}" id="logo">` : null}
<h1 id="name">${chat.display_name}</h1>
</header>
<main id="svc-chat" aria-label="Chat with ${chat.display_name}"></main>
<noscript><p class="missing">This chat needs JavaScript: please turn it on for this page.</p></noscript>
<script src="${scriptSrc}" data-token="${chat.widget_token}" data-mode="page" data-container="svc-chat" defer></script>`,
  );
}

const NOT_FOUND = page(
  { title: 'Chat not found', colour: DEFAULT_COLOUR },
  html`<main class="missing">
<h1>Chat not found</h1>
<p id="message">There is no chat at this address. Check the link you were given, or ask the organization for it.</p>
</main>`,
);

function answer(ctx: Context, status: number, rendered: { text: string; csp: string }): void {
  ctx.status = status;
  ctx.set({
    'content-security-policy': rendered.csp,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
    // The token and branding can change: a browser asks again each time.
    'cache-control': 'no-cache',
  });
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = rendered.text;
}

/** `publicUrl`'s path (behind a proxy under a prefix), so the page loads widget.js from the platform's own root. */
const basePathOf = (publicUrl: string | null): string => (publicUrl ? new URL(publicUrl).pathname.replace(/\/+$/, '') : '');

export function publicChatPageRouter(deps: PublicChatPageDependencies, options: { publicUrl: string | null }): Router<RequestState> {
  const router = new Router<RequestState>();
  const scriptSrc = `${basePathOf(options.publicUrl)}/widget.js`;

  router.get('/chat/:slug', async (ctx) => {
    try {
      answer(ctx, 200, chatPage(await publicChatPage(deps, ctx.params.slug), scriptSrc));
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'not_found') return answer(ctx, 404, NOT_FOUND);
      throw error;
    }
  });

  return router;
}
