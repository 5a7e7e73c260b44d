// OpenAPI description of the GraphQL endpoint's HTTP face (graphql.ts); the operations
// themselves are in the SDL at GET /graphql/schema.graphql.

import { type ApiArea, arrayOf, integer, object, ref, string } from './openapi/describe';

export const graphqlApi: ApiArea = {
  tag: 'graphql',
  description: 'The console API (spec 4.17): register, login, OTP, password reset, workspaces, settings. Its schema is `GET /graphql/schema.graphql`.',
  schemas: {
    GraphqlRequest: {
      type: 'object',
      required: ['query'],
      properties: {
        query: { type: 'string', minLength: 1 },
        variables: { type: ['object', 'null'] },
        operationName: { type: ['string', 'null'] },
      },
    },
    GraphqlError: {
      type: 'object',
      required: ['message'],
      properties: {
        message: string(),
        path: arrayOf({ type: ['string', 'integer'] }),
        locations: arrayOf(object({ line: integer(), column: integer() })),
        extensions: {
          type: 'object',
          properties: {
            code: string('the error code, as REST answers it'),
            status: integer('the HTTP status REST would answer'),
            field: string('the input field at fault'),
            retry_after_seconds: integer('with `rate_limited`'),
          },
        },
      },
    },
    GraphqlResponse: {
      type: 'object',
      required: ['data'],
      properties: { data: { type: ['object', 'null'] }, errors: arrayOf(ref('GraphqlError')) },
    },
  },
  routes: {
    '/graphql': {
      post: {
        summary: 'Run a GraphQL operation',
        description:
          'Login, register, OTP and password-reset mutations need no token; the others need a user token. Errors of an operation come in `errors` with `extensions.code`.',
        access: 'optional_user',
        body: { json: ref('GraphqlRequest') },
        success: { status: 200, description: 'the result; `errors` holds the failures of single fields', json: ref('GraphqlResponse') },
        otherAnswers: {
          '400': {
            description: 'the body is not `{query, variables?}` (`{code, message}`), or the query does not parse or validate (GraphQL errors with `invalid_request`)',
            json: { anyOf: [ref('Error'), ref('GraphqlResponse')] },
          },
          '429': {
            description: 'an abuse control refused the attempt; `Retry-After` says when to try again',
            json: ref('GraphqlResponse'),
          },
        },
      },
      get: {
        summary: 'GraphQL playground',
        description: 'An HTML page, served only when `ENABLE_GRAPHQL_PLAYGROUND=true`; 404 otherwise.',
        access: 'public',
        success: { status: 200, description: 'the playground', content: { type: 'text/html', schema: { type: 'string' } } },
        errors: [404],
      },
    },
    '/graphql/schema.graphql': {
      get: {
        summary: 'The GraphQL schema (SDL)',
        access: 'public',
        success: { status: 200, description: 'the schema in the GraphQL schema definition language', content: { type: 'text/plain', schema: { type: 'string' } } },
      },
    },
  },
};
