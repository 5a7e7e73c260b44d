// What a GraphQL request may ask for before it is validated or run: a bounded depth, a bounded
// number of fields (aliases and fragment uses count each time), and a bounded cost; and no
// introspection where it is switched off. Each refusal is a GraphQLError whose
// `extensions.code` names the limit, answered as HTTP 400.
//
// Depth and field count are measured on the syntax tree, before `validate`: validation is
// quadratic in the number of same-named fields (OverlappingFieldsCanBeMerged), so a document of
// thousands of aliases must be refused before it is validated. The cost needs the schema, so it
// is measured after validation (graphql-query-complexity, with the costs the resolvers declare).

import {
  type ASTVisitor,
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
  getNamedType,
  isIntrospectionType,
} from 'graphql';
import { fieldExtensionsEstimator, getComplexity, simpleEstimator } from 'graphql-query-complexity';
import { messageOf } from '../../domain/shared/errors';

export interface QueryLimits {
  /** Most nested field levels: `{ me { user { id } } }` is 3. */
  maxDepth: number;
  /** Most fields in the document, every alias and every use of a fragment counted. */
  maxFields: number;
  /** Most cost (graphql-query-complexity: 1 per field unless the field declares more). */
  maxCost: number;
}

/**
 * What resolvers declare as their cost (type-graphql's `complexity`), beyond the 1 of any field:
 * password work (scrypt) is dear, a write is dearer than a read, and a list costs its items'
 * selection as if it held ten of them.
 */
export const COST = {
  passwordWork: 200,
  write: 10,
  list: ({ childComplexity }: { childComplexity: number }): number => 1 + 10 * childComplexity,
} as const;

const refusal = (code: string, message: string, limit: number, actual: number): GraphQLError =>
  new GraphQLError(message, { extensions: { code, status: 400, limit, actual } });

/** Depth and field count of a selection set, fragments expanded (each measured once, memoised). */
function measure(document: DocumentNode): { depth: number; fields: number } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const measured = new Map<string, { depth: number; fields: number }>();
  // A fragment cycle is a validation error reported later; here it simply adds nothing.
  const inProgress = new Set<string>();

  const ofFragment = (name: string): { depth: number; fields: number } => {
    const known = measured.get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment || inProgress.has(name)) return { depth: 0, fields: 0 };
    inProgress.add(name);
    const result = ofSelectionSet(fragment.selectionSet);
    inProgress.delete(name);
    measured.set(name, result);
    return result;
  };

  const ofSelectionSet = (selectionSet: SelectionSetNode | undefined): { depth: number; fields: number } => {
    let depth = 0;
    let fields = 0;
    for (const selection of selectionSet?.selections ?? []) {
      const inner =
        selection.kind === Kind.FIELD
          ? { ...ofSelectionSet(selection.selectionSet), own: 1 }
          : selection.kind === Kind.INLINE_FRAGMENT
            ? { ...ofSelectionSet(selection.selectionSet), own: 0 }
            : { ...ofFragment(selection.name.value), own: 0 };
      depth = Math.max(depth, inner.depth + inner.own);
      fields += inner.fields + inner.own;
    }
    return { depth, fields };
  };

  let depth = 0;
  let fields = 0;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const operation = ofSelectionSet(definition.selectionSet);
    depth = Math.max(depth, operation.depth);
    fields += operation.fields;
  }
  return { depth, fields };
}

/** The refusal of a document that is too deep or has too many fields; null when within limits. */
export function queryShapeProblem(document: DocumentNode, limits: Pick<QueryLimits, 'maxDepth' | 'maxFields'>): GraphQLError | null {
  const { depth, fields } = measure(document);
  if (depth > limits.maxDepth) return refusal('query_too_deep', `the query is ${depth} levels deep; at most ${limits.maxDepth} are allowed`, limits.maxDepth, depth);
  if (fields > limits.maxFields) {
    return refusal('query_too_many_fields', `the query selects ${fields} fields (aliases and fragment uses included); at most ${limits.maxFields} are allowed`, limits.maxFields, fields);
  }
  return null;
}

/** The refusal of a validated document whose cost is over the limit; null when within it. */
export function queryCostProblem(
  schema: GraphQLSchema,
  document: DocumentNode,
  request: { variables?: Record<string, unknown>; operationName?: string },
  maxCost: number,
): GraphQLError | null {
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      variables: request.variables,
      operationName: request.operationName,
      estimators: [fieldExtensionsEstimator(), simpleEstimator({ defaultComplexity: 1 })],
    });
  } catch (error) {
    // Arguments that cannot be read with these variables: the same refusal execution would give.
    return new GraphQLError(messageOf(error), { extensions: { code: 'invalid_request', status: 400 } });
  }
  if (cost > maxCost) return refusal('query_too_complex', `the query costs ${cost}; at most ${maxCost} is allowed`, maxCost, cost);
  return null;
}

/** A validation rule refusing `__schema`, `__type` and every field of an introspection type. */
export function introspectionDisabledRule(context: ValidationContext): ASTVisitor {
  return {
    Field(node) {
      const type = context.getType();
      if (type && isIntrospectionType(getNamedType(type))) {
        context.reportError(
          new GraphQLError(`introspection is disabled on this server (the query asks for "${node.name.value}"); GRAPHQL_INTROSPECTION=true enables it`, {
            nodes: node,
            extensions: { code: 'introspection_disabled', status: 400 },
          }),
        );
      }
    },
  };
}
