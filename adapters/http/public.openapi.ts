// OpenAPI description of the public helpers (public.ts).

import { type ApiArea, type QueryParameter, boolean, nullable, object, ref, string } from './openapi/describe';

const SLUG: QueryParameter = { name: 'slug', required: true, description: 'the organization slug (case-insensitive)', schema: { type: 'string', minLength: 1 } };

export const publicApi: ApiArea = {
  tag: 'public',
  description: 'Public helpers (spec 4.15): no credential.',
  schemas: {
    TenantBranding: object({
      slug: string(),
      name: string(),
      display_name: string('the branding display name, or the organization name'),
      primary_color: nullable(string()),
      logo_url: nullable(string()),
      welcome_message: nullable(string()),
    }),
    SlugAvailability: {
      type: 'object',
      required: ['slug', 'available'],
      properties: {
        slug: string('the slug as checked (trimmed, lower case)'),
        available: boolean(),
        reason: string('why not, when not available: `taken`, or the rule the slug breaks in words'),
      },
    },
  },
  routes: {
    '/api/v1/public/tenant-branding': {
      get: {
        summary: "An organization's branding by slug",
        access: 'public',
        query: [SLUG],
        success: { status: 200, description: 'the branding (cacheable for 60 s)', json: ref('TenantBranding') },
        errors: [404],
      },
    },
    '/api/v1/public/tenant-slug-available': {
      get: {
        summary: 'Whether an organization slug is free',
        access: 'public',
        query: [SLUG],
        success: { status: 200, description: 'whether it is available, and why not', json: ref('SlugAvailability') },
      },
    },
  },
};
