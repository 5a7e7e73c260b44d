// Every projection the platform runs.
import { auditLogProjection } from './audit-log';
import type { Projection } from './projection';
import { tenantsProjection } from './tenants';

export const allProjections: readonly Projection[] = [tenantsProjection, auditLogProjection];
