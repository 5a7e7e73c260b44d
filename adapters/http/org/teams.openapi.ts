// OpenAPI description of the organization's teams (org/teams.ts).

import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { CreateTeamBody, TeamMembersBody, TeamWorkspacesBody, UpdateTeamBody, WriteFlagBody } from './teams';

export const orgTeamsApi: ApiArea = {
  tag: 'organization',
  schemas: {
    Team: object({
      id: string(),
      name: string('unique in the organization, case-insensitively'),
      description: nullable(string()),
      members: arrayOf(object({ user_id: string(), can_write_documents: boolean('whether the member may write documents in the team\'s workspaces') })),
      workspace_ids: arrayOf(string(), 'the workspaces granted to the team'),
      created_at: dateTime(),
      updated_at: dateTime(),
    }),
  },
  routes: {
    '/api/v1/org/teams': {
      get: {
        summary: 'List teams',
        access: 'user',
        role: 'admin',
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'a page of teams', json: page(ref('Team')) },
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Create a team',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(CreateTeamBody) },
        success: {
          status: 201,
          description: 'the new team',
          json: ref('Team'),
          headers: { Location: { description: 'the path of the new team', schema: { type: 'string' } } },
        },
        errors: [409],
      },
    },
    '/api/v1/org/teams/{id}': {
      get: { versioned: 'read', summary: 'One team', access: 'user', role: 'admin', success: { status: 200, description: 'the team', json: ref('Team') }, errors: [404] },
      patch: {
        versioned: 'conditional',
        summary: 'Rename a team or change its description',
        description: 'A field left out stays as it is; `description: null` clears it (a JSON merge patch: `application/merge-patch+json` is accepted as well).',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(UpdateTeamBody) },
        success: { status: 200, description: 'the team after the change', json: ref('Team') },
        errors: [404, 409],
      },
      delete: { versioned: 'conditional', summary: 'Delete a team', access: 'user', role: 'admin', success: { status: 204, description: 'deleted' }, errors: [404] },
    },
    '/api/v1/org/teams/{id}/members': {
      put: {
        versioned: 'conditional',
        summary: "Set a team's members",
        description: 'Replaces the whole list; each user must be a member of the organization, listed once.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(TeamMembersBody) },
        success: { status: 200, description: 'the team after the change', json: ref('Team') },
        errors: [404],
      },
    },
    '/api/v1/org/teams/{id}/members/{user_id}/write': {
      put: {
        versioned: 'conditional',
        summary: "Set a team member's document write flag",
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(WriteFlagBody) },
        success: { status: 200, description: 'the team after the change', json: ref('Team') },
        errors: [404],
      },
    },
    '/api/v1/org/teams/{id}/workspaces': {
      put: {
        versioned: 'conditional',
        summary: 'Grant a team workspaces',
        description: 'Replaces the whole list; each must be a workspace of the organization.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(TeamWorkspacesBody) },
        success: { status: 200, description: 'the team after the change', json: ref('Team') },
        errors: [404],
      },
    },
  },
};
