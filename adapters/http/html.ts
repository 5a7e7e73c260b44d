// Server-rendered HTML pages (the sandbox checkout page, the public chat page, the unsubscribe
// page): one template tag that escapes every interpolated value, so nothing a tenant or a
// visitor wrote reaches a page unescaped by mistake.

import { createHash } from 'node:crypto';
import type { Context } from 'koa';

/** Markup that is already safe: only `html` makes it. */
export class Html {
  constructor(readonly text: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (character) => ESCAPES[character]);

export type Fragment = string | number | Html | readonly Html[] | null | undefined | false;

/** A template whose every interpolated string is escaped; Html fragments go in as they are. */
export function html(strings: TemplateStringsArray, ...values: Fragment[]): Html {
  let text = strings[0];
  values.forEach((value, index) => {
    if (value instanceof Html) text += value.text;
    else if (Array.isArray(value)) text += value.map((fragment: Html) => fragment.text).join('');
    else if (value !== null && value !== undefined && value !== false) text += escapeHtml(String(value));
    text += strings[index + 1];
  });
  return new Html(text);
}

/** A link only to an http(s) URL: a `javascript:` one would run in the page even escaped. */
export const linkable = (url: string): boolean => /^https?:\/\//i.test(url);

/** A page that stands alone: its one inline style (allowed by `styleOnlyPolicy(style)`), no script, kept out of search engines. */
export function standalonePage(title: string, style: string, content: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<style>${new Html(style)}</style>
</head>
<body>
<main>
${content}
</main>
</body>
</html>
`;
}

/** The policy of a page with no script: its one inline style allowed by hash, no outside resource, no framing. */
export const styleOnlyPolicy = (style: string): string =>
  `default-src 'none'; style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'; base-uri 'none'; frame-ancestors 'none'`;

/**
 * Answers a page that stands alone (no script, framed by nobody, never cached, no Referer: its
 * URL may hold a key, a checkout id or an unsubscribe token).
 */
export function answerStandalonePage(ctx: Context, status: number, page: Html, policy: string): void {
  ctx.status = status;
  ctx.set({
    'content-security-policy': policy,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = page.text;
}
