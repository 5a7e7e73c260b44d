import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchemaSync } from 'type-graphql';
import { AuthResolver, ConsoleResolver } from './resolvers';

let schema: GraphQLSchema | null = null;

/** Built once per process: type-graphql's metadata is global. */
export function graphqlSchema(): GraphQLSchema {
  schema ??= buildSchemaSync({ resolvers: [AuthResolver, ConsoleResolver], validate: false });
  return schema;
}
