// Personal fields of events (docs/personal-data.md, "Erasure"): sealed under their subject's key
// on the way into the log, opened on the way out, at the decoding store, so deciders,
// projections and sagas read them in clear and nothing else changes for them.
//
// A sealed field is stored as `{ personal_data: "<sealed>", subject: "<subject>" }`: an
// object where the declaration has a string, so a text of an event written before its type
// had personal fields (a string) is never taken for a sealed one, and the subject it needs is
// written beside it. A field of another JSON value (the declaration's `json`) is sealed as its
// JSON text and stored with `json: true` too. Any top-level field of such a type in that shape
// is opened, so a field renamed by a later schema version still opens before its upcaster
// runs. A text field of an erased subject reads as ERASED_PERSONAL_DATA, a JSON one as the
// value its declaration gives. A text inside a field (a declared path: `error.message`) is
// stored in the same shape where the text was, the object around it left readable; it is
// opened where the declared paths lead, and reads as ERASED_PERSONAL_DATA once erased. An event
// whose subject is null (written after its subject was erased) is stored as it is.

import { domainEvents } from '../../domain/events';
import { ERASED_PERSONAL_DATA, type PathSegment, type PersonalTextPath, pathSegments } from '../../domain/shared/events';
import type { NewEvent, RecordedEvent } from '../ports/event-store';
import type { PersonalDataVault, SealedValue } from '../ports/personal-data';

interface StoredSealedField {
  personal_data: string;
  subject: string;
  /** Sealed as JSON text (a field of the declaration's `json`). */
  json?: true;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isSealedField = (value: unknown): value is StoredSealedField => isRecord(value) && typeof value.personal_data === 'string' && typeof value.subject === 'string';

export class PersonalDataVaultMissingError extends Error {
  constructor(what: string) {
    super(`${what} holds personal data, and this store has no personal-data vault`);
    this.name = 'PersonalDataVaultMissingError';
  }
}

/** Whether any of these events has fields declared personal (the appends that need sealing). */
export const holdsPersonalData = (events: readonly NewEvent[]): boolean => events.some((event) => domainEvents.personalFieldsOf(event.type) !== undefined);

/** Where a value is in an event's data: the keys from its top-level field down. */
type Place = ReadonlyArray<string | number>;

const segmentsOfPath = new Map<PersonalTextPath, readonly PathSegment[]>();
const NO_PLACES: readonly Place[] = Object.freeze([]);

/** The places along a declared text path that exist in `data` (each element of an array on it). */
function placesAlong(data: Record<string, unknown>, path: PersonalTextPath): readonly Place[] {
  let segments = segmentsOfPath.get(path);
  if (segments === undefined) {
    segments = pathSegments(path);
    segmentsOfPath.set(path, segments);
  }
  // Most events hold nothing there (no error): read on every decode, they cost no allocation.
  const top = data[segments[0].name];
  if (top === null || top === undefined) return NO_PLACES;
  const found: Place[] = [];
  const visit = (value: unknown, segments: readonly PathSegment[], at: Place): void => {
    if (!isRecord(value)) return;
    const [segment, ...rest] = segments;
    const child = value[segment.name];
    const here = [...at, segment.name];
    const onward = (item: unknown, place: Place): void => {
      if (rest.length === 0) found.push(place);
      else visit(item, rest, place);
    };
    if (!segment.array) onward(child, here);
    else if (Array.isArray(child)) child.forEach((item, index) => onward(item, [...here, index]));
  };
  visit(data, segments, []);
  return found;
}

function valueAt(data: unknown, place: Place): unknown {
  let value = data;
  for (const key of place) value = isRecord(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[key] : undefined;
  return value;
}

/** `data` with `value` at `place`: every object and array on the way copied, the given data left as it is (stored rows are shared, frozen). */
function withValueAt(data: Record<string, unknown>, place: Place, value: unknown): Record<string, unknown> {
  const replace = (container: unknown, depth: number): unknown => {
    const key = place[depth];
    const child = depth === place.length - 1 ? value : replace((container as Record<string | number, unknown>)[key], depth + 1);
    if (Array.isArray(container)) return container.map((item, index) => (index === key ? child : item));
    return { ...(container as Record<string, unknown>), [key]: child };
  };
  return replace(data, 0) as Record<string, unknown>;
}

/** The events with their personal fields sealed; one vault call per subject. Events of other types, or naming no subject, are returned as they are. */
export async function sealPersonalData(events: readonly NewEvent[], vault: PersonalDataVault | null): Promise<NewEvent[]> {
  const wanted = new Map<string, Array<{ event: number; place: Place; value: string; json: boolean }>>();
  events.forEach((event, index) => {
    const personal = domainEvents.personalFieldsOf(event.type);
    if (!personal || !isRecord(event.data)) return;
    const data = event.data;
    const subject = personal.subject(data);
    if (subject === null) return;
    const want = (place: Place, value: string, json: boolean): void => {
      const ofSubject = wanted.get(subject) ?? [];
      ofSubject.push({ event: index, place, value, json });
      wanted.set(subject, ofSubject);
    };
    for (const field of personal.fields) if (typeof data[field] === 'string') want([field], data[field], false);
    for (const field of Object.keys(personal.json)) if (data[field] !== undefined && data[field] !== null) want([field], JSON.stringify(data[field]), true);
    for (const path of personal.nested) {
      for (const place of placesAlong(data, path)) {
        const value = valueAt(data, place);
        if (typeof value === 'string') want(place, value, false);
      }
    }
  });
  if (wanted.size === 0) return [...events];
  if (!vault) throw new PersonalDataVaultMissingError(`an append of ${events.map((event) => event.type).join(', ')}`);
  const sealedData = events.map((event) => event.data) as Array<Record<string, unknown>>;
  for (const [subject, fields] of wanted) {
    const sealed = await vault.seal(subject, fields.map((field) => field.value));
    fields.forEach((field, index) => {
      const stored: StoredSealedField = field.json ? { personal_data: sealed[index], subject, json: true } : { personal_data: sealed[index], subject };
      sealedData[field.event] = withValueAt(sealedData[field.event], field.place, stored);
    });
  }
  return events.map((event, index) => (sealedData[index] === event.data ? event : { ...event, data: sealedData[index] }));
}

/** What an erased JSON field reads as: its declaration's value (null for a field no longer declared). */
function erasedJsonOf(type: string, field: string | number): unknown {
  const json = domainEvents.personalFieldsOf(type)?.json ?? {};
  return field in json ? structuredClone(json[field]) : null;
}

/**
 * Where a recorded event holds sealed personal data (nowhere for types without personal
 * fields): any top-level field in the sealed shape, and the declared text paths.
 */
function sealedPlacesOf(event: RecordedEvent): Array<{ place: Place; sealed: StoredSealedField }> {
  const personal = domainEvents.personalFieldsOf(event.type);
  if (personal === undefined || !isRecord(event.data)) return [];
  const data = event.data;
  const found: Array<{ place: Place; sealed: StoredSealedField }> = [];
  for (const [field, value] of Object.entries(data)) if (isSealedField(value)) found.push({ place: [field], sealed: value });
  for (const path of personal.nested) {
    for (const place of placesAlong(data, path)) {
      const value = valueAt(data, place);
      if (isSealedField(value)) found.push({ place, sealed: value });
    }
  }
  return found;
}

/** The subjects whose keys an event's sealed fields need (none for most events). */
export function sealedSubjectsOf(event: RecordedEvent): string[] {
  const places = sealedPlacesOf(event);
  if (places.length === 0) return [];
  return [...new Set(places.map(({ sealed }) => sealed.subject))];
}

/**
 * The events with their sealed fields opened (ERASED_PERSONAL_DATA for an erased subject), in
 * one vault call; an event with none is returned as it is (the same object).
 */
export async function openPersonalData(events: readonly RecordedEvent[], vault: PersonalDataVault | null): Promise<RecordedEvent[]> {
  const sealed: SealedValue[] = [];
  const places: Array<{ event: number; place: Place; json: boolean }> = [];
  events.forEach((event, index) => {
    for (const { place, sealed: value } of sealedPlacesOf(event)) {
      sealed.push({ subject: value.subject, sealed: value.personal_data });
      places.push({ event: index, place, json: value.json === true });
    }
  });
  if (sealed.length === 0) return [...events];
  if (!vault) throw new PersonalDataVaultMissingError(`${events[places[0].event].stream}@${events[places[0].event].revision}`);
  const opened = await vault.open(sealed);
  const openedData = new Map<number, Record<string, unknown>>();
  places.forEach(({ event: at, place, json }, index) => {
    const event = events[at];
    const value = opened[index];
    const clear = json ? (value === null ? erasedJsonOf(event.type, place[0]) : JSON.parse(value)) : (value ?? ERASED_PERSONAL_DATA);
    openedData.set(at, withValueAt(openedData.get(at) ?? (event.data as Record<string, unknown>), place, clear));
  });
  return events.map((event, index) => {
    const data = openedData.get(index);
    return data ? { ...event, data } : event;
  });
}
