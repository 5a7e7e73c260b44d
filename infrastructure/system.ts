// The one clock and the one id generator of a running process.
import { hash as hashOf, randomFillSync } from 'node:crypto';
import type { Clock, IdGenerator } from '../application/ports/clock';

export const systemClock: Clock = { now: () => new Date() };

/** UUID-shaped (version nibble 5, variant a) from SHA-256 of the key. */
function idFromKey(key: string): string {
  // One-shot: a third of createHash's cost, and every command that names its events by key pays it per event.
  const hex = hashOf('sha256', key, 'hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const TIME_ORDERED = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * A version 7 UUID with `after`'s millisecond (its first 48 bits) and 74 bits of SHA-256 of
 * the key for the rest; `idFromKey(key)` when `after` is not a version 7 UUID. Random ids made
 * from keys (a follow-on event's, its stream's) landed on a random page of every index they
 * are in, where the ids of `newId` land on the last: about a tenth of the events bench's CPU
 * per order (docs/performance-history.md, thirteenth session).
 */
function idFromKeyAt(key: string, after: string): string {
  if (!TIME_ORDERED.test(after)) return idFromKey(key);
  const hex = hashOf('sha256', key, 'hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${after.slice(0, 13)}-7${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Version 7 UUIDs (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter (method 1
 * of its section 6.2) that keeps the ids of one process increasing within a millisecond, then
 * 62 random bits. Ids made one after another are neighbours in every index that holds them:
 * an insert lands on the index's last page instead of a random one, which cut what the
 * embedded store writes per event by about a third (docs/performance-history.md). An id so shows
 * when it was made, to the millisecond; nothing it names is secret for that.
 */
export function timeOrderedIdGenerator(now: () => number = Date.now): () => string {
  let lastMs = -1;
  let counter = 0;
  // Random bytes drawn 4 KiB at a time: one call into the CSPRNG per 256 ids, not two per id.
  const pool = Buffer.alloc(4096);
  let used = pool.length;
  const random = (bytes: number): Buffer => {
    if (used + bytes > pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    used += bytes;
    return pool.subarray(used - bytes, used);
  };
  return () => {
    let ms = now();
    if (ms > lastMs) {
      lastMs = ms;
      // Started at a random point below half its range, so that a burst has room to count.
      counter = random(2).readUInt16BE(0) & 0x7ff;
    } else {
      // The clock stood still or went back: keep counting on the last millisecond.
      ms = lastMs;
      counter += 1;
      if (counter > 0xfff) {
        lastMs += 1;
        ms = lastMs;
        counter = 0;
      }
    }
    const bytes = Buffer.from(random(16));
    bytes.writeUIntBE(ms, 0, 6);
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}

export const uuidGenerator: IdGenerator = { newId: timeOrderedIdGenerator(), fromKey: idFromKey, fromKeyAt: idFromKeyAt };
