// OpenAPI description of widget.js and the public chat page (widget-script.ts, chat-page.ts).

import type { ApiArea, Schema } from '../openapi/describe';

const PAGE = { type: 'text/html', schema: { type: 'string' } as Schema };
const SCRIPT = { type: 'text/javascript', schema: { type: 'string' } as Schema };
const ETAG = { description: 'the version of widget.js: send it back as `If-None-Match` to revalidate', schema: { type: 'string' } };

export const widgetPagesApi: ApiArea = {
  tag: 'widget pages',
  description: 'The embeddable widget script and the public chat page (no credential; docs/widget.md).',
  routes: {
    '/widget.js': {
      get: {
        summary: 'The embeddable website widget',
        description:
          'One minified script (under 30 KB gzipped, gzip-encoded when accepted), configured by `data-token` on its script tag. `Cache-Control: public, max-age=300` and an `ETag`; `If-None-Match` with the current ETag answers 304.',
        access: 'public',
        success: { status: 200, description: 'the script', content: SCRIPT, headers: { ETag: ETAG, 'Cache-Control': { description: '`public, max-age=300`', schema: { type: 'string' } } } },
        otherAnswers: {
          '304': { description: 'unchanged since the ETag given in `If-None-Match`', headers: { ETag: ETAG } },
          '503': { description: 'widget.js has not been built on this server (`configuration_error`)', json: { $ref: '#/components/schemas/Error' } },
        },
      },
    },
    '/chat/{slug}': {
      get: {
        summary: "An organization's public chat page",
        description:
          "A full-page chat in the organization's branding (display name, colour, logo): widget.js in full-page mode with the organization's publishable widget token. An unknown, suspended or deleted organization, or one whose widget is turned off, gets the 404 page.",
        access: 'public',
        success: { status: 200, description: 'the chat page', content: PAGE },
        otherAnswers: { '404': { description: 'there is no chat at this address (an HTML page)', content: PAGE } },
      },
    },
  },
};
