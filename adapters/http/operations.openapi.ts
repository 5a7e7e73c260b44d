// OpenAPI description of the operations routes (operations.ts).

import { type ApiArea, arrayOf, boolean, enumOf, integer, object, ref, string } from './openapi/describe';

export const operationsApi: ApiArea = {
  tag: 'operations',
  description: 'Liveness, readiness and metrics (spec 4.3).',
  schemas: {
    Health: object({ status: enumOf(['ok']), uptime_seconds: integer('seconds since the process started') }),
    Readiness: object({
      status: enumOf(['ready', 'not_ready']),
      event_store: enumOf(['ok', 'unreachable']),
      read_store: enumOf(['ok', 'unreachable']),
      projections: arrayOf(object({ name: string(), status: string('running, stopped, failed, ...'), lag: integer('positions behind the head of the log'), ok: boolean() })),
    }),
  },
  routes: {
    '/health': {
      get: { summary: 'Liveness', access: 'public', success: { status: 200, description: 'the process serves requests', json: ref('Health') } },
    },
    '/ready': {
      get: {
        summary: 'Readiness',
        description: 'Ready when both stores answer and every projection runs within `READY_MAX_PROJECTION_LAG` positions of the head.',
        access: 'public',
        success: { status: 200, description: 'ready', json: ref('Readiness') },
        otherAnswers: { '503': { description: 'not ready (a store is unreachable or a projection lags or stopped)', json: ref('Readiness') } },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        description: 'Needs `Authorization: Bearer <METRICS_AUTH_TOKEN>` unless `METRICS_PUBLIC=true`.',
        access: 'metrics_token',
        success: { status: 200, description: 'the Prometheus text exposition format', content: { type: 'text/plain', schema: { type: 'string' } } },
      },
    },
  },
};
