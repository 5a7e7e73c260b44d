// The personal-data vault's contract (application/ports/personal-data.ts), run on every key
// table: two vaults over one table are two processes sharing it. Subjects are unique per test
// so that it passes on a shared database.

import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { SubjectErasedError } from '../../application/ports/personal-data';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';
import { KeyedPersonalDataVault, type SubjectKeyTable } from '../../infrastructure/personal-data/vault';
import { ManualClock } from '../support/stores';

export interface SubjectKeyTableFixture {
  /** Two tables over the same storage, as two processes have them. */
  tables: [SubjectKeyTable, SubjectKeyTable];
  dispose(): Promise<void>;
}

export function personalDataVaultContract(createFixture: () => Promise<SubjectKeyTableFixture>): void {
  const dataKey = new AesGcmSecrets(randomBytes(32));
  const clock = new ManualClock(new Date('2026-12-02T09:00:00.000Z'));
  let fixture: SubjectKeyTableFixture;
  let vault: KeyedPersonalDataVault;
  let otherProcess: KeyedPersonalDataVault;
  let subject: string;

  beforeEach(async () => {
    fixture = await createFixture();
    vault = new KeyedPersonalDataVault(fixture.tables[0], dataKey, clock);
    otherProcess = new KeyedPersonalDataVault(fixture.tables[1], dataKey, clock);
    subject = `conversation:test-${randomUUID()}`;
  });
  afterEach(() => fixture.dispose());

  it('seals values under the subject\'s key and opens them, in any process, in order', async () => {
    const sealed = await vault.seal(subject, ['Where is my order 1042?', 'It ships on Monday.', '']);
    expect(sealed).to.have.length(3);
    for (const value of sealed) expect(value).to.match(/^pd1\.[\w-]+\.[\w-]+$/);
    expect(sealed.join(' ')).to.not.include('order');
    const opened = await otherProcess.open(sealed.map((value) => ({ subject, sealed: value })));
    expect(opened).to.deep.equal(['Where is my order 1042?', 'It ships on Monday.', '']);
  });

  it('seals the same text differently each time (a fresh nonce), and opens values of several subjects in one call', async () => {
    const other = `conversation:test-${randomUUID()}`;
    const [first] = await vault.seal(subject, ['hello']);
    const [second] = await vault.seal(subject, ['hello']);
    const [theirs] = await vault.seal(other, ['bonjour']);
    expect(first).to.not.equal(second);
    expect(await vault.open([{ subject, sealed: first }, { subject: other, sealed: theirs }, { subject, sealed: second }])).to.deep.equal(['hello', 'bonjour', 'hello']);
  });

  it('does not open a value presented as another subject\'s, nor one altered', async () => {
    const other = `conversation:test-${randomUUID()}`;
    const [sealed] = await vault.seal(subject, ['secret']);
    await vault.seal(other, ['theirs']);
    let error: unknown = null;
    await vault.open([{ subject: other, sealed }]).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(Error);
    const [format, nonce, body] = sealed.split('.');
    // One character changed for another, away from the end (whose last may carry unused bits).
    const at = body.length - 5;
    const flipped = `${format}.${nonce}.${body.slice(0, at)}${body[at] === 'A' ? 'B' : 'A'}${body.slice(at + 1)}`;
    error = null;
    await vault.open([{ subject, sealed: flipped }]).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(Error);
  });

  it('makes one key per subject when two processes seal its first values at once', async () => {
    const [mine, theirs] = await Promise.all([vault.seal(subject, ['from one']), otherProcess.seal(subject, ['from the other'])]);
    expect(await vault.open([{ subject, sealed: theirs[0] }])).to.deep.equal(['from the other']);
    expect(await otherProcess.open([{ subject, sealed: mine[0] }])).to.deep.equal(['from one']);
  });

  it('after an erasure, opens the subject\'s values as null in every process, no longer counts its key kept, seals nothing more, and erasing again does nothing', async () => {
    const other = `conversation:test-${randomUUID()}`;
    const [sealed] = await vault.seal(subject, ['my address is 1 Main Street']);
    const [kept] = await vault.seal(other, ['not erased']);
    expect(await vault.keptAmong([subject, other, `conversation:test-${randomUUID()}`])).to.deep.equal(new Set([subject, other]));
    await otherProcess.erase(subject);
    expect(await vault.open([{ subject, sealed }, { subject: other, sealed: kept }])).to.deep.equal([null, 'not erased']);
    expect(await vault.keptAmong([subject, other])).to.deep.equal(new Set([other]));
    let error: unknown = null;
    await vault.seal(subject, ['again']).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(SubjectErasedError);
    await vault.erase(subject);
    expect(await otherProcess.open([{ subject, sealed }])).to.deep.equal([null]);
  });

  it('erases a subject that never had a key: none is made for it later', async () => {
    await vault.erase(subject);
    let error: unknown = null;
    await otherProcess.seal(subject, ['first words']).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(SubjectErasedError);
  });

  it('refuses to read a value whose subject the table has no row for (a lost key table), rather than reading it as erased', async () => {
    const [sealed] = await vault.seal(subject, ['text']);
    const unknown = `conversation:test-${randomUUID()}`;
    let error: unknown = null;
    await vault.open([{ subject: unknown, sealed }]).catch((caught: unknown) => (error = caught));
    expect(String(error)).to.match(/key table does not have/);
  });

  it('keeps the keys sealed under the data key: the table holds no key another data key opens', async () => {
    await vault.seal(subject, ['text']);
    const [row] = (await fixture.tables[0].find([subject])).values();
    expect(row).to.include({ subject, erased_at: null });
    expect(dataKey.open(row.key_sealed as string)).to.have.length(44); // 32 bytes, base64
    expect(() => new AesGcmSecrets(randomBytes(32)).open(row.key_sealed as string)).to.throw();
  });

  it('keeps in memory, until the time given, the key of a subject no process may erase sooner; reads the table again after', async () => {
    const until = new Date(clock.now().getTime() + 60_000);
    const keeping = new KeyedPersonalDataVault(fixture.tables[0], dataKey, clock, (asked) => (asked === subject ? until : null));
    const [sealed] = await keeping.seal(subject, ['kept']);
    // Another process erases it against the rules: the key kept in memory still opens and seals, until its time.
    await otherProcess.erase(subject);
    expect(await keeping.open([{ subject, sealed }])).to.deep.equal(['kept']);
    expect([...(await keeping.keptAmong([subject]))]).to.deep.equal([subject]);
    expect(await keeping.seal(subject, ['more'])).to.have.length(1);
    clock.advance(60_000);
    expect(await keeping.open([{ subject, sealed }])).to.deep.equal([null]);
    expect([...(await keeping.keptAmong([subject]))]).to.deep.equal([]);
    // Its own erasure drops it at once.
    const other = `conversation:test-${randomUUID()}`;
    const keepingOther = new KeyedPersonalDataVault(fixture.tables[0], dataKey, clock, () => new Date(clock.now().getTime() + 60_000));
    const [theirs] = await keepingOther.seal(other, ['theirs']);
    await keepingOther.erase(other);
    expect(await keepingOther.open([{ subject: other, sealed: theirs }])).to.deep.equal([null]);
  });
}
