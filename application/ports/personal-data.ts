// The personal-data vault (docs/personal-data.md, "Erasure"): one key per data subject (a
// conversation, a lead), kept beside the event log, never in it. Personal fields of events are sealed
// under their subject's key when they are appended and opened when they are read
// (application/events/personal-data.ts); erasing a subject deletes its key for good, which
// makes every copy of those fields unreadable, in the history and in any rebuild.

import { DomainError } from '../../domain/shared/errors';

/** A sealed value of a subject, as an event stores it. */
export interface SealedValue {
  subject: string;
  sealed: string;
}

export interface PersonalDataVault {
  /**
   * Seals the values under the subject's key, made on the subject's first use. Throws
   * SubjectErasedError for a subject that was erased: nothing of it is recorded again.
   */
  seal(subject: string, values: readonly string[]): Promise<string[]>;
  /** Opens sealed values, in order; a value of an erased subject is null. Throws for a value that does not open (altered, or sealed under another key). */
  open(values: readonly SealedValue[]): Promise<Array<string | null>>;
  /** The subjects among these whose key is kept (neither erased nor unknown): what a reader may still show of what it opened before. */
  keptAmong(subjects: readonly string[]): Promise<Set<string>>;
  /** Deletes the subject's key for good (no new one is ever made for it). Erasing again does nothing. */
  erase(subject: string): Promise<void>;
}

/** A write that would record personal data of an erased subject (a request racing its erasure): 410. */
export class SubjectErasedError extends DomainError {
  constructor(readonly subject: string) {
    super('gone', 'personal_data_erased', `${subject} was erased: nothing more is recorded of it`);
    this.name = 'SubjectErasedError';
  }
}
