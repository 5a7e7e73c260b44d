// Versions of single resources, which the HTTP edge sends as `ETag` and takes back in
// `If-Match`. A resource built from one stream is versioned by that stream's revision, so a
// version the client saw becomes the expected revision of its next write (412 when another
// write came first).

import { DomainError } from '../../domain/shared/errors';

/** A resource as read, with its version (opaque text: digits, letters, `.` and `-`). */
export interface Versioned<T> {
  value: T;
  version: string;
}

/** What a write may be given: the version of the resource the client saw (If-Match). */
export interface WritePreconditions {
  expectedVersion?: string;
}

export const versionOfRevision = (revision: number): string => String(revision);

/** The stream revision a version starts with (a workspace's adds a digest after it); NaN for none. */
export const revisionOfVersion = (version: string): number => Number.parseInt(version, 10);

export function versionMismatch(resource: string, expected: string, actual: string): DomainError {
  return new DomainError('precondition_failed', 'revision_mismatch', `the ${resource} is at version ${actual}, not ${expected}; read it again`);
}

/**
 * The stream revision an expected version names, if one was given. A version that is not a
 * revision (another resource's, or a weak tag) can never match: 412.
 */
export function expectedRevisionOf(resource: string, expected: string | undefined, actual: number): number | undefined {
  if (expected === undefined) return undefined;
  if (expected !== versionOfRevision(actual)) throw versionMismatch(resource, expected, versionOfRevision(actual));
  return actual;
}
