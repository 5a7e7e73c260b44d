// GET /api/v1/openapi.json: the OpenAPI 3.1 description of the REST API (openapi/document.ts),
// public like the API's shape itself.

import Router from '@koa/router';
import { openApiDocument } from './openapi/document';

export function apiDescriptionRouter(): Router {
  const router = new Router();
  router.get('/api/v1/openapi.json', (ctx) => {
    ctx.set('cache-control', 'public, max-age=300');
    ctx.body = openApiDocument();
  });
  return router;
}
