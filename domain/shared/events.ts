// Event declarations (castore's declare-once, Emmett's upcasting in one place). Each event
// type is declared once, next to its aggregate: its name, the io-ts codec of its data, the
// schema version it is written with today, and an upcaster from every older version. The
// aggregate's group (its stream category, list of types and TypeScript union) and the
// registry of every event (domain/events.ts) are derived from the declarations; nothing
// restates them. Decoding a stored event is a pure function of the registry: upcast from the
// version it was written with, then decode with the current codec. A group may declare its
// personal data (`GroupPersonalData`): the fields the decoding store keeps sealed under a
// subject's key, and the event that erases the subject (docs/personal-data.md).

import { isLeft } from 'fp-ts/Either';
import type * as t from 'io-ts';
import type { Message } from './decider';
import { type StreamCategory, streamCategory } from './stream-names';
import { messageOf } from './errors';

/** Maps the data of version n to the shape of version n + 1; history itself is never rewritten. */
export type Upcaster = (data: Readonly<Record<string, unknown>>) => unknown;

export interface EventSchema {
  /** The version events of this type are written with today. */
  version: number;
  /** One per older version n (1 .. version - 1), mapping it to n + 1. */
  upcasters: Readonly<Record<number, Upcaster>>;
}

export interface EventDeclaration<Type extends string = string, Data = unknown> {
  readonly type: Type;
  readonly data: t.Decoder<unknown, Data>;
  readonly version: number;
  readonly upcasters: Readonly<Record<number, Upcaster>>;
  /** Fields holding a data subject's personal data, kept sealed under the subject's key (the group's `personalData`). */
  readonly personal?: PersonalFields;
  /** The data subject an event of this type erases (the group's `personalData.erasedBy`). */
  readonly erases?: (data: Readonly<Record<string, unknown>>) => string | null;
}

/**
 * Personal data in an event (docs/personal-data.md, "Erasure"): fields that are stored sealed
 * under the key of the data subject they belong to. Erasing the subject deletes its key, so the
 * fields can no longer be read anywhere: not in the history, not by a rebuild. Deciders,
 * projections and sagas read them in clear like any other field.
 */
export interface PersonalFields {
  /**
   * The data subject (`conversation:<id>`), from the event's plain fields; null when the event
   * names none, and is then stored as it is (written after its subject was erased, it holds
   * nothing of it).
   */
  subject(data: Readonly<Record<string, unknown>>): string | null;
  /** Top-level fields of text, read as ERASED_PERSONAL_DATA once erased; one absent or null is left as it is. */
  fields: readonly string[];
  /** Top-level fields of any other JSON value (sealed as JSON), each with what it reads as once erased; absent or null is left as it is. */
  json: Readonly<Record<string, unknown>>;
  /**
   * Texts inside a field (`PersonalTextPath`: `error.message`, `steps[].error.message`), read as
   * ERASED_PERSONAL_DATA once erased: the object around them stays readable. A path that
   * leads nowhere in an event (a null error, no steps) seals nothing.
   */
  nested: readonly PersonalTextPath[];
}

/**
 * A text inside an event's data: field names joined by dots, `[]` after one that holds an array
 * (each element then goes on along the path). At least two names: a top-level text is a `fields` entry.
 */
export type PersonalTextPath = `${string}.${string}`;

const PERSONAL_TEXT_PATH = /^[a-z_][a-z0-9_]*(\[\])?(\.[a-z_][a-z0-9_]*(\[\])?)+$/;

/** One name of a path, and whether it holds an array. */
export interface PathSegment {
  name: string;
  array: boolean;
}

/** The names of a personal text path (checked at declaration). */
export function pathSegments(path: PersonalTextPath): PathSegment[] {
  return path.split('.').map((part) => (part.endsWith('[]') ? { name: part.slice(0, -2), array: true } : { name: part, array: false }));
}

/** What a personal field of an erased subject reads as. */
export const ERASED_PERSONAL_DATA = '[erased]';

type DataOf<Declaration> = Declaration extends EventDeclaration<string, infer Data> ? Data : never;

/** The text fields of an event's data (what may be declared personal). */
type TextFieldOf<Declaration> = Declaration extends EventDeclaration<string, infer Data> ? { [Field in keyof Data]-?: NonNullable<Data[Field]> extends string ? Field : never }[keyof Data] & string : never;

/** An aggregate's personal data: its subject, the fields of each event type that hold it, the event that erases it. */
export interface GroupPersonalData<Declaration extends EventDeclaration> {
  /**
   * The subject, from an event's plain fields: every event of a stream names the same one,
   * except in an aggregate that keeps copies of other subjects' data (an idempotent request's
   * answer), whose events each name the subject they copy.
   */
  subject(data: Readonly<Record<string, unknown>>): string | null;
  fields: { readonly [Type in Declaration['type']]?: ReadonlyArray<TextFieldOf<Extract<Declaration, { type: Type }>>> };
  /** Fields of other JSON values, each with what it reads as once erased: a value its codec accepts. */
  json?: { readonly [Type in Declaration['type']]?: Partial<DataOf<Extract<Declaration, { type: Type }>>> };
  /** Texts inside fields (`PersonalTextPath`), each read as ERASED_PERSONAL_DATA once erased. */
  nested?: { readonly [Type in Declaration['type']]?: readonly PersonalTextPath[] };
  /** Recording it deletes the subject's key; absent when the subjects are other aggregates' (they erase them). */
  erasedBy?: Declaration['type'];
}

/** The `{type, data}` message of a declaration (or of a union of them), in its current shape. */
export type EventOf<Declaration> = Declaration extends EventDeclaration<infer Type, infer Data> ? { type: Type; data: Data } : never;

const TYPE_NAME = /^[A-Z][A-Za-z0-9]*$/;

/** Declares an event type. Without a schema it is at version 1 and needs no upcaster. */
export function declareEvent<Type extends string, Data extends t.Mixed>(
  type: Type,
  data: Data,
  schema: EventSchema = { version: 1, upcasters: {} },
): EventDeclaration<Type, t.TypeOf<Data>> {
  if (!TYPE_NAME.test(type)) throw new Error(`event type "${type}" must be PascalCase, past tense (for example "TenantCreated")`);
  if (!Number.isInteger(schema.version) || schema.version < 1) throw new Error(`event ${type}: the schema version must be an integer from 1`);
  const needed = Array.from({ length: schema.version - 1 }, (_, index) => index + 1);
  const given = Object.keys(schema.upcasters)
    .map(Number)
    .sort((a, b) => a - b);
  if (given.join(',') !== needed.join(',')) {
    throw new Error(`event ${type} is at version ${schema.version}: it needs exactly one upcaster from each older version (${needed.join(', ') || 'none'}), got ${given.join(', ') || 'none'}`);
  }
  return { type, data, version: schema.version, upcasters: schema.upcasters };
}

/** An aggregate's events: its stream category and the declarations of its event types. */
export interface EventGroup<Declaration extends EventDeclaration = EventDeclaration> {
  readonly category: StreamCategory;
  readonly declarations: readonly Declaration[];
  readonly types: readonly Declaration['type'][];
  /** Whether an event the registry decoded is one of this group's (its data then has the declared shape). */
  includes<M extends Message>(event: M): event is M & EventOf<Declaration>;
  /** The schema version events of this type are written with. */
  versionOf(type: Declaration['type']): number;
}

function withPersonalData<Declaration extends EventDeclaration>(declaration: Declaration, personalData: GroupPersonalData<Declaration>): Declaration {
  if (declaration.type === personalData.erasedBy) return { ...declaration, erases: personalData.subject };
  const fields = (personalData.fields as Readonly<Record<string, readonly string[] | undefined>>)[declaration.type] ?? [];
  const json = (personalData.json as Readonly<Record<string, Readonly<Record<string, unknown>> | undefined>> | undefined)?.[declaration.type] ?? {};
  const nested = (personalData.nested as Readonly<Record<string, readonly PersonalTextPath[] | undefined>> | undefined)?.[declaration.type] ?? [];
  if (fields.length === 0 && Object.keys(json).length === 0 && nested.length === 0) return declaration;
  return { ...declaration, personal: { subject: personalData.subject, fields, json, nested } };
}

/** The TypeScript union of a group's events. */
export type GroupEvent<Group> = Group extends EventGroup<infer Declaration> ? EventOf<Declaration> : never;

type DeclarationOf<Group> = Group extends EventGroup<infer Declaration> ? Declaration : never;

/** Groups the declarations of one aggregate under its stream category (camelCase, no dash). */
export function eventGroup<const Declarations extends readonly EventDeclaration[]>(
  category: string,
  given: Declarations,
  personalData?: GroupPersonalData<Declarations[number]>,
): EventGroup<Declarations[number]> {
  const checked = streamCategory(category);
  const declarations = personalData ? (given.map((declaration) => withPersonalData(declaration, personalData)) as unknown as Declarations) : given;
  const byType = new Map<string, EventDeclaration>();
  for (const declaration of declarations) {
    if (byType.has(declaration.type)) throw new Error(`event type ${declaration.type} is declared twice in ${category}`);
    byType.set(declaration.type, declaration);
  }
  if (personalData?.erasedBy !== undefined && !byType.has(personalData.erasedBy)) throw new Error(`${category}: the erasing event ${personalData.erasedBy} is not one of its types`);
  for (const type of [...Object.keys(personalData?.fields ?? {}), ...Object.keys(personalData?.json ?? {}), ...Object.keys(personalData?.nested ?? {})]) {
    if (!byType.has(type)) throw new Error(`${category}: personal fields of ${type}, which is not one of its types`);
  }
  for (const [type, paths] of Object.entries(personalData?.nested ?? {}) as Array<[string, readonly string[]]>) {
    const wrong = paths.find((path) => !PERSONAL_TEXT_PATH.test(path));
    if (wrong !== undefined) throw new Error(`${category}: personal text path "${wrong}" of ${type} is not names joined by dots (each may end in [])`);
  }
  return {
    category: checked,
    declarations,
    types: declarations.map((declaration) => declaration.type),
    includes: <M extends Message>(event: M): event is M & EventOf<Declarations[number]> => byType.has(event.type),
    versionOf: (type) => versionIn(byType, type),
  };
}

/** Why a stored event could not be read in its current shape. */
export type DecodeFailure = { reason: 'unknown_type' | 'unknown_version' | 'mismatch'; message: string };

export type DecodeResult<Event> = { ok: true; event: Event } | ({ ok: false } & DecodeFailure);

/** Every declared event of the platform: one per type, across all aggregates. */
export interface EventRegistry<Declaration extends EventDeclaration = EventDeclaration> {
  readonly groups: readonly EventGroup[];
  readonly types: readonly Declaration['type'][];
  /** The stream categories, one per aggregate. */
  readonly categories: readonly StreamCategory[];
  has(type: string): type is Declaration['type'];
  versionOf(type: Declaration['type']): number;
  /** Upcasts data written with schema version `writtenWith` (1 when the metadata has none) and decodes it. */
  decode(type: string, data: unknown, writtenWith: number): DecodeResult<EventOf<Declaration>>;
  /** The personal fields of a type; undefined for a type with none (or not declared). */
  personalFieldsOf(type: string): PersonalFields | undefined;
  /** The subject an event erases; null for a type that erases none. */
  erasedSubjectOf(type: string, data: unknown): string | null;
  /** The types whose events erase a subject. */
  readonly erasingTypes: readonly Declaration['type'][];
}

/** The TypeScript union of a registry's events. */
export type RegistryEvent<Registry> = Registry extends EventRegistry<infer Declaration> ? EventOf<Declaration> : never;

/** Builds the registry; a type or a category declared twice is an error at start. */
export function eventRegistry<const Groups extends readonly EventGroup[]>(groups: Groups): EventRegistry<DeclarationOf<Groups[number]>> {
  type Declaration = DeclarationOf<Groups[number]>;
  const categories = new Set<string>();
  for (const group of groups) {
    if (categories.has(group.category)) throw new Error(`stream category ${group.category} is declared by two event groups`);
    categories.add(group.category);
  }
  const byType = new Map<string, EventDeclaration>();
  const ownerOf = new Map<string, string>();
  for (const group of groups) {
    for (const declaration of group.declarations) {
      const earlier = ownerOf.get(declaration.type);
      if (earlier) throw new Error(`event type ${declaration.type} is declared twice (in ${earlier} and ${group.category})`);
      byType.set(declaration.type, declaration);
      ownerOf.set(declaration.type, group.category);
    }
  }
  return {
    groups,
    types: [...byType.keys()] as Declaration['type'][],
    categories: groups.map((group) => group.category),
    has: (type): type is Declaration['type'] => byType.has(type),
    versionOf: (type) => versionIn(byType, type),
    personalFieldsOf: (type) => byType.get(type)?.personal,
    erasingTypes: [...byType.values()].filter((declaration) => declaration.erases !== undefined).map((declaration) => declaration.type) as Declaration['type'][],
    erasedSubjectOf(type, data) {
      const erases = byType.get(type)?.erases;
      return erases && isRecord(data) ? erases(data) : null;
    },
    decode(type, data, writtenWith) {
      const declaration = byType.get(type);
      if (!declaration) return { ok: false, reason: 'unknown_type', message: `no event type ${type} is declared` };
      if (!Number.isInteger(writtenWith) || writtenWith < 1 || writtenWith > declaration.version) {
        return { ok: false, reason: 'unknown_version', message: `schema version ${String(writtenWith)} is not one of 1..${declaration.version} (written by a newer release?)` };
      }
      let current = data;
      for (let version = writtenWith; version < declaration.version; version += 1) {
        if (!isRecord(current)) return { ok: false, reason: 'mismatch', message: `the data of version ${version} is not an object` };
        try {
          current = declaration.upcasters[version](current);
        } catch (error) {
          return { ok: false, reason: 'mismatch', message: `the upcaster from version ${version} failed: ${messageOf(error)}` };
        }
      }
      const decoded = declaration.data.decode(current);
      if (isLeft(decoded)) return { ok: false, reason: 'mismatch', message: describeErrors(decoded.left, writtenWith, declaration.version) };
      // The declaration was looked up by `type`, so its decoded data belongs to that member of the union.
      return { ok: true, event: { type: declaration.type, data: decoded.right } as EventOf<Declaration> };
    },
  };
}

function versionIn(byType: ReadonlyMap<string, EventDeclaration>, type: string): number {
  const declaration = byType.get(type);
  if (!declaration) throw new Error(`no event type ${type} is declared`);
  return declaration.version;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** "data.name: expected string, got undefined"; values are not shown, they may be secret. */
function describeErrors(errors: t.Errors, writtenWith: number, current: number): string {
  const shown = errors.slice(0, 3).map((error) => {
    const path = error.context
      .map((entry) => entry.key)
      .filter((key) => key !== '')
      .join('.');
    const expected = error.context[error.context.length - 1]?.type.name ?? 'a value';
    const actual = error.value === null ? 'null' : Array.isArray(error.value) ? 'array' : typeof error.value;
    return `${path ? `data.${path}` : 'data'}: expected ${expected}, got ${actual}`;
  });
  const more = errors.length > shown.length ? ` (and ${errors.length - shown.length} more)` : '';
  const upcast = writtenWith < current ? ` after upcasting from version ${writtenWith} to ${current}` : '';
  return `${shown.join('; ')}${more}${upcast}`;
}
