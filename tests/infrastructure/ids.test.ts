// The process's ids: version 7 UUIDs that increase, so that indexes take them at their end.
import { expect } from 'chai';
import { timeOrderedIdGenerator, uuidGenerator } from '../../infrastructure/system';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('Ids', () => {
  it('are version 7 UUIDs carrying the millisecond they were made', () => {
    const id = timeOrderedIdGenerator(() => Date.UTC(2026, 10, 23, 12, 0, 0, 5))();
    expect(id).to.match(UUID_V7);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).to.equal(Date.UTC(2026, 10, 23, 12, 0, 0, 5));
    expect(uuidGenerator.newId()).to.match(UUID_V7);
  });

  it('increase strictly, and stay distinct, within one millisecond and when the clock goes back', () => {
    let clock = 1_000_000;
    const next = timeOrderedIdGenerator(() => clock);
    const ids: string[] = [];
    for (let index = 0; index < 10_000; index += 1) {
      if (index === 6_000) clock -= 50;
      if (index === 8_000) clock += 100;
      ids.push(next());
    }
    for (let index = 1; index < ids.length; index += 1) expect(ids[index] > ids[index - 1], `${ids[index - 1]} then ${ids[index]}`).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(UUID_V7);
  });

  it('derive the same id from the same key', () => {
    expect(uuidGenerator.fromKey('a key')).to.equal(uuidGenerator.fromKey('a key'));
    expect(uuidGenerator.fromKey('a key')).to.not.equal(uuidGenerator.fromKey('another key'));
  });

  it('derive from a key and an id of theirs the same id, carrying that id\'s millisecond; from a key and any other id, the key\'s own', () => {
    const after = timeOrderedIdGenerator(() => Date.UTC(2026, 10, 29, 12, 0, 0, 7))();
    const placed = uuidGenerator.fromKeyAt('a key', after);
    expect(placed).to.match(UUID_V7);
    expect(placed.slice(0, 13)).to.equal(after.slice(0, 13));
    expect(uuidGenerator.fromKeyAt('a key', after)).to.equal(placed);
    expect(uuidGenerator.fromKeyAt('another key', after)).to.not.equal(placed);
    // What follows is derived from the key alone: the same whichever id of that millisecond it follows.
    expect(uuidGenerator.fromKeyAt('a key', `${after.slice(0, 13)}-7000-8000-000000000000`)).to.equal(placed);
    for (const other of ['', 'order-1', uuidGenerator.fromKey('x')]) expect(uuidGenerator.fromKeyAt('a key', other)).to.equal(uuidGenerator.fromKey('a key'));
    // Stored in events (follow-ons' ids): pinned, as fromKey's is.
    expect(uuidGenerator.fromKeyAt('a key', '019ac9a0-1234-7abc-8def-0123456789ab')).to.equal('019ac9a0-1234-779e-8a03-98da5b5abd07');
  });

  it('derive from a key the id every earlier release derived from it', () => {
    // Ids derived from keys are stored in events (retried requests, follow-on events): a change of the derivation would make a retry after an upgrade a new write.
    expect(uuidGenerator.fromKey('order-1:orchestration-event')).to.equal('fbd4b0a7-485e-58c5-a9b3-c82cc6fe02fc');
  });
});
