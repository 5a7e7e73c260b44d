// GET /widget.js: the embeddable widget (adapters/widget-client), as `npm run build` bundled
// it. Public, on every site that embeds it: cached for a short while (a new release reaches
// visitors within minutes) and revalidated by its ETag (304 when unchanged); gzipped for
// browsers that take it. The file is read again only when it changes on disk.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import Router from '@koa/router';
import { HttpError } from '../errors';
import type { RequestState } from '../middleware/request-context';

/** How long browsers and CDNs keep widget.js before they revalidate it. */
export const WIDGET_SCRIPT_MAX_AGE_SECONDS = 300;

interface LoadedScript {
  stamp: string;
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

/** The bundle at `bundlePath`, read once per version on disk; null when it has not been built. */
function scriptLoader(bundlePath: string): () => LoadedScript | null {
  let loaded: LoadedScript | null = null;
  return () => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(bundlePath);
    } catch {
      return null;
    }
    const stamp = `${stat.mtimeMs}:${stat.size}`;
    if (loaded?.stamp !== stamp) {
      const body = fs.readFileSync(bundlePath);
      loaded = { stamp, body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return loaded;
  };
}

/**
 * Whether If-None-Match names this version (weak comparison, RFC 9110 13.1.2). Not Koa's
 * `ctx.fresh`: that refuses any request with `Cache-Control: no-cache`, which fetch() adds to
 * every conditional request it did not make itself, though a 304 is exactly the revalidation
 * no-cache asks for.
 */
function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export function widgetScriptRouter(options: { bundlePath: string }): Router<RequestState> {
  const router = new Router<RequestState>();
  const load = scriptLoader(options.bundlePath);

  router.get('/widget.js', async (ctx) => {
    const script = load();
    if (!script) throw new HttpError(503, 'configuration_error', 'widget.js has not been built on this server: run `npm run build`');
    ctx.set({
      'cache-control': `public, max-age=${WIDGET_SCRIPT_MAX_AGE_SECONDS}`,
      etag: script.etag,
      vary: 'Accept-Encoding',
      'x-content-type-options': 'nosniff',
      // Any site may load it, including one that isolates itself (COEP) or checks it with SRI.
      'cross-origin-resource-policy': 'cross-origin',
      'access-control-allow-origin': '*',
    });
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.status = 200;
    if (matchesEtag(ctx.get('if-none-match'), script.etag)) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('content-encoding', 'gzip');
      ctx.body = script.gzipped;
    } else {
      ctx.body = script.body;
    }
  });

  return router;
}
