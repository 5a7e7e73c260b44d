import { expect } from 'chai';
import { silentLogger } from '../../application/ports/logger';
import { Lease } from '../../application/shared/lease';
import { type EmbeddedStores, ManualClock, embeddedStores } from '../support/stores';

describe('Lease', () => {
  const clock = new ManualClock();
  const TTL_MS = 60_000;
  let stores: EmbeddedStores;
  beforeEach(() => {
    stores = embeddedStores(clock);
  });
  afterEach(() => stores.dispose());

  const leaseOf = (holder: string, holderIsGone?: (holder: string) => boolean): Lease =>
    new Lease({ readStore: stores.readStore, clock, logger: silentLogger }, 'ledger', 1, { holder, ttlMs: TTL_MS, holderIsGone }, () => undefined);
  const holderNow = async (): Promise<string | undefined> => (await stores.readStore.getProjectionState('ledger'))?.lease?.holder;

  it('waits for a live lease of another holder to lapse', async () => {
    expect(await leaseOf('first').tryAcquire()).to.equal(true);
    const second = leaseOf('second');
    expect(await second.tryAcquire()).to.equal(false);
    clock.advance(TTL_MS);
    expect(await second.tryAcquire()).to.equal(true);
  });

  it('takes a live lease at once from a holder known to be gone, and only from that one', async () => {
    expect(await leaseOf('crashed').tryAcquire()).to.equal(true);
    const askedAbout: string[] = [];
    const restarted = leaseOf('restarted', (holder) => {
      askedAbout.push(holder);
      return holder === 'crashed';
    });
    expect(await restarted.tryAcquire()).to.equal(true);
    expect(await holderNow()).to.equal('restarted');
    expect(askedAbout).to.deep.equal(['crashed']);

    // A holder that runs is waited for, as ever.
    const standby = leaseOf('standby', (holder) => holder === 'crashed');
    expect(await standby.tryAcquire()).to.equal(false);
    expect(await holderNow()).to.equal('restarted');
  });
});
