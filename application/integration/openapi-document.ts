// Reading an OpenAPI document for an import (spec 4.12, issue #12 point 2): the bytes a
// tenant uploaded or that the platform fetched, as a validated, dereferenced document.
//
// - JSON or YAML (the `yaml` package: YAML 1.2 core schema, at most 100 aliases, duplicate
//   keys refused), then made plain JSON (a recursive YAML alias is refused).
// - OpenAPI 3.0 and 3.1 only. Swagger 2.0 is refused with a message saying how to convert it:
//   the converters fetch the document's external references themselves, outside the
//   platform's outbound guard, and a conversion the tenant runs and checks is one they can
//   read. Any other version is refused.
// - Validated and dereferenced by @readme/openapi-parser (the maintained fork of
//   swagger-parser, which understands 3.1): `$ref` chains are followed, circular references
//   become cycles of objects (application/integration/openapi-schema.ts cuts them). External
//   references, files and URLs alike, are never resolved: the document is read as sent, and
//   the platform makes no request on its behalf (server-side request forgery).
// - A few of the parser's stricter rules (path parameters declared on both sides, arrays
//   without `items`) are warnings here: an operation they leave inexpressible is skipped
//   with its reason rather than the whole document refused.

import { createHash } from 'node:crypto';
import { compileErrors, dereference, validate, type ParserOptions } from '@readme/openapi-parser';
import { parse as parseYaml } from 'yaml';
import { type DomainError, invalid, messageOf } from '../../domain/shared/errors';
import { isPlainObject } from './openapi-schema';

export type OpenApiDialect = '3.0' | '3.1';

export interface OpenApiDocument {
  dialect: OpenApiDialect;
  /** The `openapi` field: `3.0.3`, `3.1.0`. */
  openapi: string;
  /** `info.title` and `info.version`. */
  title: string;
  version: string;
  /** The SHA-256 of the bytes read, hex. */
  sha256: string;
  /** The document with every internal `$ref` replaced by what it points to (recursive schemas are cycles). */
  api: Record<string, unknown>;
  /** Component schema names by their dereferenced object. */
  schemaNames: ReadonlyMap<object, string>;
}

/** How long validating or dereferencing one document may take. */
const PARSER_TIMEOUT_MS = 10_000;

const PARSER_OPTIONS: ParserOptions = {
  resolve: { external: false, file: false },
  timeoutMs: PARSER_TIMEOUT_MS,
  validate: {
    errors: { colorize: false },
    rules: {
      openapi: {
        'array-without-items': 'warning',
        'non-optional-path-parameters': 'warning',
        'path-parameters-not-in-parameters': 'warning',
        'path-parameters-not-in-path': 'warning',
      },
    },
  },
};

const notOpenApi = (field: string, why: string): DomainError => invalid('not_openapi', `${field}: ${why}`, field);

/** The text of the bytes: UTF-8 (a byte order mark is dropped), refused when it is not text. */
function textOf(bytes: Buffer | string, field: string): string {
  if (typeof bytes === 'string') return bytes;
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw notOpenApi(field, 'the document is not UTF-8 text (expected OpenAPI as JSON or YAML)');
  }
}

function parseText(text: string, field: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') throw notOpenApi(field, 'the document is empty');
  if (trimmed.startsWith('{')) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      // YAML's flow style starts with { too; YAML reads JSON as well.
    }
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { schema: 'core', maxAliasCount: 100, uniqueKeys: true, prettyErrors: false });
  } catch (error) {
    throw notOpenApi(field, `the document is neither JSON nor YAML (${error instanceof Error ? error.message.split('\n')[0].slice(0, 200) : 'unreadable'})`);
  }
  try {
    // Plain JSON from here on: YAML's aliases may share or even nest objects.
    return JSON.parse(JSON.stringify(parsed)) as unknown;
  } catch {
    throw notOpenApi(field, 'the YAML refers to itself (a recursive alias)');
  }
}

/** The version family the import reads, or a 400 saying why the document is not one. */
function dialectOf(document: Record<string, unknown>, field: string): OpenApiDialect {
  if (document.swagger !== undefined) {
    throw invalid(
      'swagger_not_supported',
      `${field}: this is a Swagger ${String(document.swagger)} document; only OpenAPI 3.0 and 3.1 are imported. Convert it to OpenAPI 3 first (for example with the swagger2openapi tool or the Swagger Editor's "Convert to OpenAPI 3") and import the result`,
      field,
    );
  }
  if (typeof document.openapi !== 'string') throw notOpenApi(field, 'the document has no "openapi" version field: it is not an OpenAPI document');
  if (/^3\.0\.\d+$/.test(document.openapi)) return '3.0';
  if (/^3\.1\.\d+$/.test(document.openapi)) return '3.1';
  throw invalid('unsupported_openapi_version', `${field}: OpenAPI ${document.openapi.slice(0, 20)} is not imported; OpenAPI 3.0 and 3.1 are`, field);
}

/** The parser's problems, shortened for an error message. */
function problemsOf(message: string): string {
  const text = message.replace(/\s+/g, ' ').trim();
  return text.length > 1000 ? `${text.slice(0, 1000)}...` : text;
}

/**
 * Reads, validates and dereferences an OpenAPI 3.0 or 3.1 document. Refusals are 400 naming
 * `field`: `not_openapi` (not text, neither JSON nor YAML, no `openapi` field),
 * `swagger_not_supported`, `unsupported_openapi_version`, `invalid_openapi` (with the
 * validator's findings).
 */
export async function readOpenApiDocument(bytes: Buffer | string, field: string): Promise<OpenApiDocument> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const parsed = parseText(textOf(bytes, field), field);
  if (!isPlainObject(parsed)) throw notOpenApi(field, 'the document is not a JSON or YAML object');
  const dialect = dialectOf(parsed, field);
  let api: Record<string, unknown>;
  try {
    const validation = await validate(structuredClone(parsed) as never, PARSER_OPTIONS);
    if (!validation.valid) throw invalid('invalid_openapi', `${field}: the document is not valid OpenAPI ${parsed.openapi as string}: ${problemsOf(compileErrors(validation))}`, field);
    api = (await dereference(structuredClone(parsed) as never, { ...PARSER_OPTIONS, dereference: { circular: true } })) as unknown as Record<string, unknown>;
  } catch (error) {
    if ((error as DomainError).code === 'invalid_openapi') throw error;
    throw invalid('invalid_openapi', `${field}: the document cannot be read as OpenAPI: ${problemsOf(messageOf(error))}`, field);
  }
  const info = isPlainObject(api.info) ? api.info : {};
  return {
    dialect,
    openapi: parsed.openapi as string,
    title: typeof info.title === 'string' ? info.title : '',
    version: typeof info.version === 'string' ? info.version : '',
    sha256,
    api,
    schemaNames: schemaNamesOf(parsed, api),
  };
}

/** Component schema names by their dereferenced object; a name that is only a `$ref` to another is an alias, not a name. */
function schemaNamesOf(raw: Record<string, unknown>, api: Record<string, unknown>): Map<object, string> {
  const names = new Map<object, string>();
  const rawSchemas = isPlainObject(raw.components) && isPlainObject(raw.components.schemas) ? raw.components.schemas : {};
  const schemas = isPlainObject(api.components) && isPlainObject(api.components.schemas) ? api.components.schemas : {};
  for (const [name, schema] of Object.entries(schemas)) {
    const original = rawSchemas[name];
    if (!isPlainObject(schema) || (isPlainObject(original) && typeof original.$ref === 'string' && Object.keys(original).length === 1)) continue;
    if (!names.has(schema)) names.set(schema, name);
  }
  return names;
}
