// OpenAPI description of the description itself (api-description.ts).

import type { ApiArea } from './openapi/describe';

export const apiDescriptionApi: ApiArea = {
  tag: 'api description',
  description: 'This document.',
  routes: {
    '/api/v1/openapi.json': {
      get: {
        summary: 'The OpenAPI 3.1 description of the REST API',
        access: 'public',
        success: { status: 200, description: 'this document', json: { type: 'object', required: ['openapi', 'info', 'paths'] } },
      },
    },
  },
};
