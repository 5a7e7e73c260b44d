// GET /health (liveness), GET /ready (stores reachable, projections caught up),
// GET /metrics (Prometheus; bearer METRICS_AUTH_TOKEN unless METRICS_PUBLIC=true).

import { timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { ReadinessReport } from '../../application/operations/readiness';
import type { HttpMetrics } from '../../application/ports/metrics';
import { HttpError } from './errors';

export interface OperationsDependencies {
  readiness(): Promise<ReadinessReport>;
  metrics: HttpMetrics;
  metricsAuthToken: string | null;
  metricsPublic: boolean;
  startedAt: Date;
}

function sameToken(offered: string, expected: string): boolean {
  const a = Buffer.from(offered);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function operationsRouter(deps: OperationsDependencies): Router {
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok', uptime_seconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000) };
  });
  router.get('/ready', async (ctx) => {
    const report = await deps.readiness();
    ctx.status = report.ready ? 200 : 503;
    ctx.body = { status: report.ready ? 'ready' : 'not_ready', ...report.checks };
  });
  router.get('/metrics', async (ctx) => {
    if (!deps.metricsPublic) {
      const header = ctx.get('authorization');
      const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length).trim() : '';
      if (!deps.metricsAuthToken || !token || !sameToken(token, deps.metricsAuthToken)) {
        throw new HttpError(401, 'unauthorized', 'metrics need a bearer METRICS_AUTH_TOKEN', { 'www-authenticate': 'Bearer' });
      }
    }
    const { contentType, body } = await deps.metrics.render();
    ctx.type = contentType;
    ctx.body = body;
  });
  return router;
}
