// A read model of one document per stream (or per key its events name), written as a pure
// `evolve(document, event)`: the skeleton each of them needs (read the document, skip an
// event it already applied, write what evolve returns, stamped with the event's position) is
// written here once, so a replayed or redelivered event is harmless in every one of them,
// creations included (Emmett's single-stream projection).

import type { DomainEventType } from '../domain/events';
import type { RecordedOf } from '../application/ports/domain-event-store';
import type { CollectionSpec, Document } from '../application/ports/read-store';
import type { EventProjection } from './projection';

/** A document as `evolve` returns it: its `position` is stamped by the projection. */
export type Unpositioned<Doc> = { [Key in keyof Doc as Key extends 'position' ? never : Key]: Doc[Key] };

export interface DocumentProjectionSpec<Type extends DomainEventType, Doc extends Document & { position: number }> {
  name: string;
  /** Bump to rebuild (projection.ts). */
  version: number;
  collection: CollectionSpec;
  handles: readonly Type[];
  /** The id of the document the event changes. */
  documentId(event: RecordedOf<Type>): string;
  /**
   * The document after the event, from the one before it (null before its first event).
   * Returning `current` itself writes nothing; null leaves no document: the one there is
   * deleted (an event that removes it), or none is written (an event about a document that
   * does not exist).
   */
  evolve(current: Doc | null, event: RecordedOf<Type>): Unpositioned<Doc> | null;
}

export function documentProjection<Type extends DomainEventType, Doc extends Document & { position: number }>(
  spec: DocumentProjectionSpec<Type, Doc>,
): EventProjection<Type> {
  const collection = spec.collection.name;
  return {
    name: spec.name,
    version: spec.version,
    collections: [spec.collection],
    handles: spec.handles,
    async apply(event, view) {
      const id = spec.documentId(event);
      const current = await view.get<Doc>(collection, id);
      // Applied already: a redelivery or a replay changes nothing.
      if (current && current.position >= event.position) return;
      const next = spec.evolve(current, event);
      if (next === current) return;
      if (next === null) view.delete(collection, id);
      else view.put(collection, { ...next, id, position: event.position });
    },
  };
}
