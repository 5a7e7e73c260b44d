// What both search index adapters share: question words, reciprocal rank fusion, vectors.

import { expect } from 'chai';
import { blobToVector, dot, normalized, reciprocalRankFusion, searchTerms, topByScore, vectorToBlob } from '../../infrastructure/search-index/ranking';

describe('search ranking', () => {
  it('reads a question as lower-cased words without syntax, repeats or stopwords', () => {
    expect(searchTerms('How do I get a REFUND for my order? Refund!')).to.deep.equal(['get', 'refund', 'order']);
    expect(searchTerms('"*)(OR NEAR')).to.deep.equal(['near']);
    expect(searchTerms('title:x -y z* NEAR(a b)')).to.deep.equal(['title', 'x', 'y', 'z', 'near', 'b']);
    expect(searchTerms('Café crème')).to.deep.equal(['café', 'crème']);
    expect(searchTerms('ｆｕｌｌｗｉｄｔｈ')).to.deep.equal(['fullwidth']);
    expect(searchTerms('()*"')).to.deep.equal([]);
  });

  it('keeps the stopwords when a question has nothing else', () => {
    expect(searchTerms('Who are you?')).to.deep.equal(['who', 'are', 'you']);
  });

  it('searches by at most 32 words', () => {
    expect(searchTerms(Array.from({ length: 100 }, (_, index) => `w${index}`).join(' '))).to.have.length(32);
  });

  it('fuses rankings by the sum of 1 / (60 + rank)', () => {
    const fused = reciprocalRankFusion([['a', 'b', 'c'], ['c', 'a']], 10);
    expect(fused.map((hit) => hit.id)).to.deep.equal(['a', 'c', 'b']);
    expect(fused[0].score).to.be.closeTo(1 / 61 + 1 / 62, 1e-12);
    expect(fused[1].score).to.be.closeTo(1 / 63 + 1 / 61, 1e-12);
    expect(fused[2].score).to.be.closeTo(1 / 62, 1e-12);
    expect(reciprocalRankFusion([['a', 'b', 'c']], 2).map((hit) => hit.id)).to.deep.equal(['a', 'b']);
  });

  it('normalises vectors, compares them by dot product, and stores them as Float32 bytes', () => {
    const unit = normalized([3, 4]);
    expect(Array.from(unit)).to.deep.equal([Math.fround(0.6), Math.fround(0.8)]);
    expect(dot(unit, normalized([6, 8]))).to.be.closeTo(1, 1e-6);
    expect(Array.from(normalized([0, 0]))).to.deep.equal([0, 0]);
    const blob = vectorToBlob([0.5, -1.25, 3]);
    expect(blob.length).to.equal(12);
    expect(Array.from(blobToVector(blob))).to.deep.equal([0.5, -1.25, 3]);
    // An unaligned view still reads back.
    const shifted = Buffer.concat([Buffer.from([9]), blob]).subarray(1);
    expect(Array.from(blobToVector(shifted))).to.deep.equal([0.5, -1.25, 3]);
  });

  it('selects the best by score, highest first, ties in their order', () => {
    const best = topByScore(['a', 'bb', 'cc', 'ddd', 'e'], (item) => item.length, 3);
    expect(best.map((entry) => entry.item)).to.deep.equal(['ddd', 'bb', 'cc']);
  });
});
