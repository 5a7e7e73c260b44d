// The HTTP request of a tool call, built from the tool's definition and the (checked)
// arguments, under its integration's base URL (issue #12 point 4). Pure: no credentials are
// looked up here; the caller hands in the headers and query parameters that authenticate.
//
// - Path placeholders take their argument URL-encoded as one segment (`/pets/{id}` with
//   `a/b` -> `/pets/a%2Fb`), and an empty, `.` or `..` one is refused (URL parsers resolve
//   dot segments, encoded or not): an argument cannot climb out of the path it was given.
// - Query parameters: an array is sent as the parameter repeated (OpenAPI's default
//   `form`, exploded); null or absent ones are left out.
// - Headers: a value with a control character is refused (no header injection).
// - Body: JSON; the body arguments as properties, or the one argument mapped with no name as
//   the whole body. A GET or DELETE gets a body only when the mapping gives it one.
// - An argument the mapping does not place goes where an API most likely expects it: into the
//   JSON body for POST, PUT and PATCH (unless one argument is the whole body), into the query
//   for GET and DELETE.
// - Scalars are sent as their text (`true`, `42`); objects and arrays in a path, query or
//   header as JSON text.
// - Header names are sent lowercased, so a default header and an argument for the same header
//   (any case) are one header: the argument wins, and the authenticating headers win over both.

import { type ParameterMapping, type ToolDefinition, pathPlaceholders } from '../../domain/tool/tool';
import type { ArgumentProblem } from '../tool/input-schema';

export interface ToolHttpRequest {
  method: string;
  url: string;
  /** Lowercased names. */
  headers: Record<string, string>;
  body: string | null;
}

/** What the platform adds: authentication and the end user's headers (query parameters replace arguments of the same name). */
export interface AddedToRequest {
  headers: Record<string, string>;
  query: Record<string, string>;
}

export const TOOL_USER_AGENT = 'svc-platform-tools/1';

const CONTROL = /[\u0000-\u001f\u007f]/;
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/** The request, or the problems of arguments that cannot be sent (a path argument missing, a header value with a control character). */
export function buildToolRequest(
  definition: Pick<ToolDefinition, 'method' | 'path' | 'parameters'>,
  args: Readonly<Record<string, unknown>>,
  integration: { base_url: string; default_headers: Readonly<Record<string, string>> },
  added: AddedToRequest,
): { request: ToolHttpRequest } | { problems: ArgumentProblem[] } {
  const problems: ArgumentProblem[] = [];
  const mapped = new Map<string, ParameterMapping>(definition.parameters.map((mapping) => [mapping.argument, mapping]));
  const present = (name: string): boolean => args[name] !== undefined && args[name] !== null;

  let path = definition.path;
  for (const placeholder of pathPlaceholders(definition.path)) {
    const mapping = definition.parameters.find((candidate) => candidate.in === 'path' && candidate.name === placeholder);
    if (!mapping || !present(mapping.argument)) {
      problems.push({ field: `arguments.${mapping?.argument ?? placeholder}`, message: `is required: it is the {${placeholder}} of the path` });
      continue;
    }
    const segment = textOf(args[mapping.argument]);
    // URL parsers resolve `.` and `..` segments (encoded too, %2e): the argument would climb the path.
    if (segment === '' || segment === '.' || segment === '..') {
      problems.push({ field: `arguments.${mapping.argument}`, message: 'must not be empty, . or .. (it is a segment of the path)' });
      continue;
    }
    path = path.split(`{${placeholder}}`).join(encodeURIComponent(segment));
  }

  const query: Array<[string, string]> = [];
  const addQuery = (name: string, value: unknown): void => {
    for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined && item !== null) query.push([name, textOf(item)]);
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(integration.default_headers)) headers[name.toLowerCase()] = value;
  const wholeBody = definition.parameters.find((mapping) => mapping.in === 'body' && mapping.name === null);
  let body: unknown = undefined;
  const bodyProperties: Record<string, unknown> = {};

  for (const mapping of definition.parameters) {
    if (!present(mapping.argument) || mapping.in === 'path') continue;
    const value = args[mapping.argument];
    if (mapping.in === 'query') addQuery(mapping.name ?? mapping.argument, value);
    else if (mapping.in === 'header') {
      const text = textOf(value);
      if (CONTROL.test(text)) problems.push({ field: `arguments.${mapping.argument}`, message: 'must not contain control characters (it is sent as a header)' });
      else headers[(mapping.name ?? mapping.argument).toLowerCase()] = text;
    } else if (mapping.name === null) body = value;
    else bodyProperties[mapping.name] = value;
  }
  for (const [argument, value] of Object.entries(args)) {
    if (mapped.has(argument) || value === undefined) continue;
    if (!WITH_BODY.has(definition.method)) addQuery(argument, value);
    else if (!wholeBody) bodyProperties[argument] = value;
  }
  if (problems.length > 0) return { problems };
  if (body === undefined && Object.keys(bodyProperties).length > 0) body = bodyProperties;

  const base = new URL(integration.base_url);
  const search = new URLSearchParams(base.search);
  for (const [name, value] of query) if (!(name in added.query)) search.append(name, value);
  for (const [name, value] of Object.entries(added.query)) search.set(name, value);
  const queryText = search.toString();
  const url = `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}${queryText ? `?${queryText}` : ''}`;

  headers.accept ??= 'application/json';
  headers['user-agent'] ??= TOOL_USER_AGENT;
  const bodyText = body === undefined ? null : JSON.stringify(body);
  if (bodyText !== null) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(added.headers)) headers[name.toLowerCase()] = value;
  return { request: { method: definition.method, url, headers, body: bodyText } };
}
