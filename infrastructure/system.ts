// The one clock and the one id generator of a running process.
import { createHash, randomUUID } from 'node:crypto';
import type { Clock, IdGenerator } from '../application/ports/clock';

export const systemClock: Clock = { now: () => new Date() };

/** UUID-shaped (version nibble 5, variant a) from SHA-256 of the key. */
function idFromKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const uuidGenerator: IdGenerator = { newId: () => randomUUID(), fromKey: idFromKey };
