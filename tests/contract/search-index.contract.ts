// The SearchIndex contract, run against every adapter: relevance order, tenant and
// workspace isolation (for words and for vectors), replace and remove, hybrid ranking by
// reciprocal rank fusion, and question text that is never query syntax. Tenant ids are
// unique per test, so it passes on a shared database.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { IndexedChunk, SearchHit, SearchIndex, SearchQuery } from '../../application/ports/search-index';

export interface SearchIndexFixture {
  index: SearchIndex;
  dispose(): Promise<void>;
}

interface ChunkSpec {
  title?: string;
  heading?: string | null;
  text: string;
  workspace?: string;
  vector?: number[];
}

export function searchIndexContract(createFixture: () => Promise<SearchIndexFixture>): void {
  let fixture: SearchIndexFixture;
  let tenant: string;
  let other: string;
  const W1 = 'workspace-one';
  const W2 = 'workspace-two';

  beforeEach(async () => {
    fixture = await createFixture();
    tenant = `tenant-${randomUUID()}`;
    other = `tenant-${randomUUID()}`;
  });
  afterEach(() => fixture.dispose());

  /** Indexes a document of the given chunks; returns its id. */
  async function add(tenantId: string, documentId: string, specs: ChunkSpec[]): Promise<string> {
    const chunks: IndexedChunk[] = specs.map((spec, ordinal) => ({
      chunk_id: `${documentId}:${ordinal}`,
      document_id: documentId,
      tenant_id: tenantId,
      workspace_id: spec.workspace ?? W1,
      title: spec.title ?? `Document ${documentId}`,
      ordinal,
      heading: spec.heading ?? null,
      text: spec.text,
      vector: spec.vector ?? null,
    }));
    await fixture.index.replaceDocument(tenantId, documentId, chunks);
    return documentId;
  }

  const search = (text: string, options: Partial<SearchQuery> = {}): Promise<SearchHit[]> =>
    fixture.index.search({ tenant_id: tenant, workspace_ids: [W1, W2], text, limit: 10, ...options });
  const ids = (hits: readonly SearchHit[]): string[] => hits.map((hit) => hit.chunk.chunk_id);

  it('finds chunks by their words, the most relevant first, with scores that fall', async () => {
    await add(tenant, 'refunds', [{ title: 'Refund policy', text: 'A refund is paid within five days. Ask for a refund by email; the refund goes to the card you paid with.' }]);
    await add(tenant, 'shipping', [
      { title: 'Shipping', text: 'Parcels leave the warehouse every morning and arrive within three days in most countries. Damaged parcels qualify for a refund.' },
    ]);
    await add(tenant, 'hours', [{ title: 'Opening hours', text: 'The shop opens at nine and closes at six on weekdays.' }]);
    const hits = await search('How do I get a refund?');
    expect(ids(hits)).to.deep.equal(['refunds:0', 'shipping:0']);
    expect(hits[0].score).to.be.greaterThan(hits[1].score);
    expect(hits[0].chunk).to.deep.include({ document_id: 'refunds', tenant_id: tenant, workspace_id: W1, title: 'Refund policy', ordinal: 0, heading: null });
    expect(hits[0].chunk.text).to.match(/^A refund is paid/);
  });

  it('matches other forms of a word (stemming) and ignores case and accents', async () => {
    await add(tenant, 'returns', [{ text: 'Returned items are REFUNDED after inspection at the depot.' }]);
    expect(ids(await search('return refunds'))).to.deep.equal(['returns:0']);
    await add(tenant, 'cafe', [{ text: 'The café serves breakfast.' }]);
    expect(ids(await search('cafe'))).to.deep.equal(['cafe:0']);
  });

  it('weighs a word in the title or heading above the same word in the text', async () => {
    await add(tenant, 'in-text', [{ title: 'General notes', heading: 'Misc', text: 'Notes on many topics, warranty among them, and delivery and payment and more.' }]);
    await add(tenant, 'in-title', [{ title: 'Warranty', heading: 'Coverage', text: 'Notes on many topics, coverage among them, and delivery and payment and more.' }]);
    expect(ids(await search('warranty'))).to.deep.equal(['in-title:0', 'in-text:0']);
  });

  it('answers at most `limit` hits and nothing when no word matches', async () => {
    for (let index = 0; index < 8; index += 1) await add(tenant, `doc-${index}`, [{ text: `Invoice number ${index} explains the invoice layout.` }]);
    expect(await search('invoice', { limit: 3 })).to.have.length(3);
    expect(await search('invoice', { limit: 100 })).to.have.length(8);
    expect(await search('zeppelin')).to.deep.equal([]);
  });

  it("never returns another tenant's chunks, even when its workspace ids are asked for", async () => {
    await add(other, 'foreign', [{ text: 'Secret merger plans of the other company.', workspace: W1 }]);
    await add(tenant, 'mine', [{ text: 'Our public merger announcement.', workspace: W1 }]);
    expect(ids(await search('merger plans'))).to.deep.equal(['mine:0']);
    expect(await fixture.index.search({ tenant_id: other, workspace_ids: [W1], text: 'merger', limit: 10 }).then(ids)).to.deep.equal(['foreign:0']);
  });

  it('returns only chunks of the workspaces asked for, and nothing for none', async () => {
    await add(tenant, 'sales', [{ text: 'Pricing guide for the sales team.', workspace: W1 }]);
    await add(tenant, 'hr', [{ text: 'Salary bands and pricing of benefits.', workspace: W2 }]);
    expect(ids(await search('pricing', { workspace_ids: [W1] }))).to.deep.equal(['sales:0']);
    expect(ids(await search('pricing', { workspace_ids: [W2] }))).to.deep.equal(['hr:0']);
    expect((await search('pricing', { workspace_ids: [W1, W2] })).length).to.equal(2);
    expect(await search('pricing', { workspace_ids: [] })).to.deep.equal([]);
    expect(await search('pricing', { workspace_ids: ['workspace-unknown'] })).to.deep.equal([]);
  });

  it('replaces every chunk of a document, leaving other documents alone', async () => {
    await add(tenant, 'guide', [{ text: 'Version one talks about apples.' }, { text: 'Apples are red.' }, { text: 'More apples.' }]);
    await add(tenant, 'keep', [{ text: 'Apples and oranges.' }]);
    await add(tenant, 'guide', [{ text: 'Version two talks about bananas.', workspace: W2 }]);
    expect(ids(await search('apples'))).to.deep.equal(['keep:0']);
    const bananas = await search('bananas');
    expect(ids(bananas)).to.deep.equal(['guide:0']);
    expect(bananas[0].chunk.workspace_id).to.equal(W2);
  });

  it('removes every chunk of a document; removing again or an unknown one is harmless', async () => {
    await add(tenant, 'gone', [{ text: 'Elephants never forget.' }, { text: 'Elephants are large.' }]);
    await add(tenant, 'stays', [{ text: 'Elephants in the zoo.' }]);
    await add(other, 'gone', [{ text: 'Elephants of the other tenant.' }]);
    await fixture.index.removeDocument(tenant, 'gone');
    await fixture.index.removeDocument(tenant, 'gone');
    await fixture.index.removeDocument(tenant, 'never-indexed');
    expect(ids(await search('elephants'))).to.deep.equal(['stays:0']);
    // The same document id in another tenant is another document.
    expect(ids(await fixture.index.search({ tenant_id: other, workspace_ids: [W1], text: 'elephants', limit: 10 }))).to.deep.equal(['gone:0']);
    await add(tenant, 'emptied', [{ text: 'Elephants again.' }]);
    await fixture.index.replaceDocument(tenant, 'emptied', []);
    expect(ids(await search('elephants'))).to.deep.equal(['stays:0']);
  });

  it('refuses chunks of another document or tenant in replaceDocument', async () => {
    const stray: IndexedChunk = { chunk_id: 'x:0', document_id: 'x', tenant_id: other, workspace_id: W1, title: 't', ordinal: 0, heading: null, text: 'stray' };
    let refused: unknown = null;
    await fixture.index.replaceDocument(tenant, 'x', [stray]).catch((error: unknown) => (refused = error));
    expect(refused).to.be.instanceOf(Error);
    expect(await fixture.index.search({ tenant_id: other, workspace_ids: [W1], text: 'stray', limit: 10 })).to.deep.equal([]);
  });

  it('reads any question text as words, never as query syntax', async () => {
    await add(tenant, 'near', [{ text: 'Stores near the station open early; OR codes and AND gates are not our business.' }]);
    const hostile = [
      '"*)(OR NEAR',
      'NEAR(station stores, 2)',
      'AND',
      'OR OR OR',
      'NOT',
      '-station',
      'station*',
      '^station',
      'text: station',
      '{title text}: station',
      'title:station',
      '"unbalanced',
      "it's",
      '()',
      '*',
      '   ',
      '😀 🚉',
      '\u0000station\u0000',
      'station'.repeat(2000),
      Array.from({ length: 500 }, (_, index) => `word${index}`).join(' '),
    ];
    for (const text of hostile) {
      const hits = await search(text);
      expect(hits, text.slice(0, 40)).to.be.an('array');
    }
    expect(ids(await search('"*)(OR NEAR'))).to.deep.equal(['near:0']);
    expect(ids(await search('-station'))).to.deep.equal(['near:0']);
    expect(ids(await search('station*'))).to.deep.equal(['near:0']);
    expect(ids(await search('{title text}: station'))).to.deep.equal(['near:0']);
  });

  describe('with vectors (hybrid retrieval)', () => {
    // Four-dimensional vectors: each axis one topic.
    const REFUNDS = [1, 0, 0, 0];
    const SHIPPING = [0, 1, 0, 0];
    const HOURS = [0, 0, 1, 0];

    it('finds by meaning what shares no word with the question', async () => {
      await add(tenant, 'money-back', [{ text: 'We return your payment within five days.', vector: REFUNDS }]);
      await add(tenant, 'parcels', [{ text: 'Parcels leave every morning.', vector: SHIPPING }]);
      expect(await search('refund')).to.deep.equal([]);
      const hits = await search('refund', { vector: [0.9, 0.1, 0, 0] });
      expect(ids(hits)[0]).to.equal('money-back:0');
    });

    it('puts first what both rankings agree on (reciprocal rank fusion)', async () => {
      await add(tenant, 'both', [{ text: 'Refund requests: how a refund is paid.', vector: REFUNDS }]);
      await add(tenant, 'words-only', [{ text: 'Refund refund refund, a page full of the word refund.', vector: HOURS }]);
      await add(tenant, 'meaning-only', [{ text: 'Your money comes back within a week.', vector: [0.95, 0.05, 0, 0] }]);
      await add(tenant, 'neither', [{ text: 'The shop opens at nine.', vector: HOURS }]);
      const hits = await search('refund', { vector: REFUNDS });
      expect(ids(hits)[0]).to.equal('both:0');
      expect(ids(hits).slice(1, 3).sort()).to.deep.equal(['meaning-only:0', 'words-only:0']);
      for (let index = 1; index < hits.length; index += 1) expect(hits[index - 1].score).to.be.at.least(hits[index].score);
    });

    it("keeps vector search inside the tenant's allowed workspaces", async () => {
      await add(tenant, 'allowed', [{ text: 'Public price list.', vector: SHIPPING, workspace: W1 }]);
      await add(tenant, 'other-workspace', [{ text: 'Private salary list.', vector: REFUNDS, workspace: W2 }]);
      await add(other, 'other-tenant', [{ text: 'Foreign salary list.', vector: REFUNDS, workspace: W1 }]);
      const hits = await search('salaries', { vector: REFUNDS, workspace_ids: [W1] });
      expect(ids(hits)).to.deep.equal(['allowed:0']);
    });

    it('uses the new vectors after a replace and none after a remove', async () => {
      await add(tenant, 'changing', [{ text: 'Alpha.', vector: REFUNDS }]);
      expect(ids(await search('zzz', { vector: REFUNDS }))).to.deep.equal(['changing:0']);
      await add(tenant, 'changing', [{ text: 'Beta.', vector: SHIPPING }]);
      await add(tenant, 'steady', [{ text: 'Gamma.', vector: REFUNDS }]);
      expect(ids(await search('zzz', { vector: REFUNDS }))).to.deep.equal(['steady:0', 'changing:0']);
      await fixture.index.removeDocument(tenant, 'steady');
      expect(ids(await search('zzz', { vector: REFUNDS }))).to.deep.equal(['changing:0']);
    });

    it('leaves out vectors of another length (another model) and chunks without vectors', async () => {
      await add(tenant, 'old-model', [{ text: 'Indexed with an older model.', vector: [1, 0] }]);
      await add(tenant, 'no-vector', [{ text: 'Indexed without embeddings.' }]);
      await add(tenant, 'current', [{ text: 'Indexed with the current model.', vector: REFUNDS }]);
      expect(ids(await search('zzz', { vector: REFUNDS }))).to.deep.equal(['current:0']);
      expect(ids(await search('indexed', { vector: REFUNDS }))).to.have.members(['old-model:0', 'no-vector:0', 'current:0']);
    });
  });
}
