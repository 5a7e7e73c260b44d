// OpenAPI description of the organization's workspaces (org/workspaces.ts).

import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { WorkspaceTeamsBody } from './workspaces';

export const orgWorkspacesApi: ApiArea = {
  tag: 'organization',
  schemas: {
    Workspace: object({
      id: string(),
      name: string(),
      is_default: boolean('the workspace created with the organization'),
      created_at: dateTime(),
      teams: arrayOf(object({ id: string(), name: string() }), 'the teams granted this workspace'),
    }),
  },
  routes: {
    '/api/v1/org/workspaces': {
      get: { summary: 'List workspaces', access: 'user', query: PAGE_PARAMETERS, success: { status: 200, description: 'a page of workspaces', json: page(ref('Workspace')) } },
    },
    '/api/v1/org/workspaces/{id}': {
      get: { versioned: 'read', summary: 'One workspace', access: 'user', success: { status: 200, description: 'the workspace', json: ref('Workspace') }, errors: [404] },
    },
    '/api/v1/org/workspaces/{id}/teams': {
      put: {
        versioned: 'conditional',
        summary: 'Set the teams that have a workspace',
        description: 'Grants the workspace to the listed teams and revokes it from the others; each must be a team of the organization.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(WorkspaceTeamsBody) },
        success: { status: 200, description: 'the workspace after the change', json: ref('Workspace') },
        errors: [404],
      },
    },
  },
};
