// Every projection the platform runs.
import { auditLogProjection } from './audit-log';
import { emailsProjection } from './emails';
import { invitationsProjection } from './invitations';
import { membershipsProjection } from './memberships';
import type { Projection } from './projection';
import { registrationsProjection } from './registrations';
import { sessionsProjection } from './sessions';
import { teamsProjection } from './teams';
import { tenantsProjection } from './tenants';
import { usersProjection } from './users';
import { workspacesProjection } from './workspaces';

export const allProjections: readonly Projection[] = [
  tenantsProjection,
  auditLogProjection,
  usersProjection,
  membershipsProjection,
  sessionsProjection,
  workspacesProjection,
  emailsProjection,
  teamsProjection,
  invitationsProjection,
  registrationsProjection,
];
