// What a projection is: a name, a version, the events it handles and how each one changes
// documents. Handlers write through a ProjectionView, which buffers the batch's writes so the
// runner can commit them together with the checkpoint.

import type { DomainEventType } from '../domain/events';
import type { RecordedOf } from '../application/ports/domain-event-store';
import type { RecordedEvent } from '../application/ports/event-store';
import type { CollectionSpec, Document, FieldEqualities } from '../application/ports/read-store';

export interface ProjectionView {
  /** Reads a document, seeing this batch's earlier writes. */
  get<T extends Document = Document>(collection: string, id: string): Promise<T | null>;
  put(collection: string, doc: Document): void;
  patch(collection: string, id: string, changes: Record<string, unknown>): void;
  delete(collection: string, id: string): void;
  /**
   * Deletes every document whose named fields (declared ones) equal these values: the stored
   * documents as this batch's earlier writes left them. A later write in the batch stands.
   */
  deleteWhere(collection: string, where: FieldEqualities): void;
  /**
   * Shallow-merges `changes` into every document whose named fields (declared ones) equal these
   * values, as this batch's earlier writes left them; a later write in the batch stands.
   */
  patchWhere(collection: string, where: FieldEqualities, changes: Record<string, unknown>): void;
}

interface ProjectionBase {
  name: string;
  /** Bump to rebuild from the start of `$all` into shadow collections, then swap. */
  version: number;
  collections: readonly CollectionSpec[];
}

/** A projection of some declared event types: it gets them decoded, `switch (event.type)` narrows the data. */
export interface EventProjection<Type extends DomainEventType = DomainEventType> extends ProjectionBase {
  handles: readonly Type[];
  apply(event: RecordedOf<Type>, view: ProjectionView): Promise<void> | void;
}

/**
 * A projection of the whole log (the audit log): every event, of any type, with its envelope,
 * exactly as stored (not decoded).
 */
export interface LogProjection extends ProjectionBase {
  handles: 'all';
  apply(event: RecordedEvent, view: ProjectionView): Promise<void> | void;
}

export type Projection = EventProjection | LogProjection;
