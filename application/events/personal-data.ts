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
// value its declaration gives.

import { domainEvents } from '../../domain/events';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
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

/** The events with their personal text fields sealed; one vault call per subject. Events of other types are returned as they are. */
export async function sealPersonalData(events: readonly NewEvent[], vault: PersonalDataVault | null): Promise<NewEvent[]> {
  const wanted = new Map<string, Array<{ event: number; field: string; value: string; json: boolean }>>();
  events.forEach((event, index) => {
    const personal = domainEvents.personalFieldsOf(event.type);
    if (!personal || !isRecord(event.data)) return;
    const data = event.data;
    const subject = personal.subject(data);
    const want = (field: string, value: string, json: boolean): void => {
      const ofSubject = wanted.get(subject) ?? [];
      ofSubject.push({ event: index, field, value, json });
      wanted.set(subject, ofSubject);
    };
    for (const field of personal.fields) if (typeof data[field] === 'string') want(field, data[field], false);
    for (const field of Object.keys(personal.json)) if (data[field] !== undefined && data[field] !== null) want(field, JSON.stringify(data[field]), true);
  });
  if (wanted.size === 0) return [...events];
  if (!vault) throw new PersonalDataVaultMissingError(`an append of ${events.map((event) => event.type).join(', ')}`);
  const sealedData = events.map((event) => (isRecord(event.data) ? { ...event.data } : event.data)) as Array<Record<string, unknown>>;
  for (const [subject, fields] of wanted) {
    const sealed = await vault.seal(subject, fields.map((field) => field.value));
    fields.forEach((field, index) => {
      const stored: StoredSealedField = field.json ? { personal_data: sealed[index], subject, json: true } : { personal_data: sealed[index], subject };
      sealedData[field.event][field.field] = stored;
    });
  }
  return events.map((event, index) => ({ ...event, data: sealedData[index] }));
}

/** What an erased JSON field reads as: its declaration's value (null for a field no longer declared). */
function erasedJsonOf(type: string, field: string): unknown {
  const json = domainEvents.personalFieldsOf(type)?.json ?? {};
  return field in json ? structuredClone(json[field]) : null;
}

/** The fields of a recorded event that hold sealed personal data (none for types without personal fields). */
function sealedFieldsOf(event: RecordedEvent): string[] {
  if (domainEvents.personalFieldsOf(event.type) === undefined || !isRecord(event.data)) return [];
  const data = event.data;
  return Object.keys(data).filter((field) => isSealedField(data[field]));
}

/** The subjects whose keys an event's sealed fields need (none for most events). */
export function sealedSubjectsOf(event: RecordedEvent): string[] {
  const fields = sealedFieldsOf(event);
  if (fields.length === 0) return [];
  const data = event.data as Record<string, StoredSealedField>;
  return [...new Set(fields.map((field) => data[field].subject))];
}

/**
 * The events with their sealed fields opened (ERASED_PERSONAL_DATA for an erased subject), in
 * one vault call; an event with none is returned as it is (the same object).
 */
export async function openPersonalData(events: readonly RecordedEvent[], vault: PersonalDataVault | null): Promise<RecordedEvent[]> {
  const sealed: SealedValue[] = [];
  const places: Array<{ event: number; field: string }> = [];
  events.forEach((event, index) => {
    for (const field of sealedFieldsOf(event)) {
      const value = (event.data as Record<string, StoredSealedField>)[field];
      sealed.push({ subject: value.subject, sealed: value.personal_data });
      places.push({ event: index, field });
    }
  });
  if (sealed.length === 0) return [...events];
  if (!vault) throw new PersonalDataVaultMissingError(`${events[places[0].event].stream}@${events[places[0].event].revision}`);
  const opened = await vault.open(sealed);
  const openedData = new Map<number, Record<string, unknown>>();
  places.forEach((place, index) => {
    const event = events[place.event];
    const data = openedData.get(place.event) ?? { ...(event.data as Record<string, unknown>) };
    const json = (event.data as Record<string, StoredSealedField>)[place.field].json === true;
    const value = opened[index];
    data[place.field] = json ? (value === null ? erasedJsonOf(event.type, place.field) : JSON.parse(value)) : (value ?? ERASED_PERSONAL_DATA);
    openedData.set(place.event, data);
  });
  return events.map((event, index) => {
    const data = openedData.get(index);
    return data ? { ...event, data } : event;
  });
}
