// The one clock and the one id generator of a running process.
import { randomUUID } from 'node:crypto';
import type { Clock, IdGenerator } from '../application/ports/clock';

export const systemClock: Clock = { now: () => new Date() };
export const uuidGenerator: IdGenerator = { newId: () => randomUUID() };
