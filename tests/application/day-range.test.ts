// The `from`/`to` range of the usage series: calendar days in UTC, both ends included.

import { expect } from 'chai';
import { dayRange, daysOf, monthToDate } from '../../application/analytics/day-range';
import { DomainError } from '../../domain/shared/errors';

const NOW = new Date('2026-03-10T23:59:59.000Z');

function refusal(query: { from?: string; to?: string }): DomainError {
  try {
    dayRange(query, NOW);
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('day range of the usage series', () => {
  it('defaults to the last 30 days up to today (UTC), and to 29 days before a given `to`', () => {
    expect(dayRange({}, NOW)).to.deep.equal({ from: '2026-02-09', to: '2026-03-10' });
    expect(daysOf(dayRange({}, NOW))).to.have.length(30);
    expect(dayRange({ to: '2026-01-29' }, NOW)).to.deep.equal({ from: '2025-12-31', to: '2026-01-29' });
    expect(dayRange({ from: '2026-03-01' }, NOW)).to.deep.equal({ from: '2026-03-01', to: '2026-03-10' });
  });

  it('takes one day, and 366 days at most', () => {
    expect(daysOf(dayRange({ from: '2026-03-10', to: '2026-03-10' }, NOW))).to.deep.equal(['2026-03-10']);
    const leapYear = dayRange({ from: '2024-01-01', to: '2024-12-31' }, NOW);
    expect(daysOf(leapYear)).to.have.length(366);
    expect(refusal({ from: '2024-01-01', to: '2025-01-01' })).to.include({ kind: 'invalid', code: 'invalid_request', field: 'from' });
  });

  it('walks across month ends and leap days', () => {
    expect(daysOf({ from: '2024-02-28', to: '2024-03-01' })).to.deep.equal(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(monthToDate(NOW)).to.deep.equal({ from: '2026-03-01', to: '2026-03-10' });
  });

  it('refuses what is not a calendar day, naming the field', () => {
    for (const text of ['2026-3-1', '2026-02-30', '2026-13-01', '20260301', '2026-03-01T00:00:00Z', '', 'yesterday', '0099-01-01']) {
      expect(refusal({ from: text, to: '2026-03-10' }), `from=${text}`).to.include({ code: 'invalid_request', field: 'from' });
      expect(refusal({ from: '2026-03-01', to: text }), `to=${text}`).to.include({ code: 'invalid_request', field: 'to' });
    }
  });

  it('refuses `from` after `to`', () => {
    expect(refusal({ from: '2026-03-02', to: '2026-03-01' })).to.include({ code: 'invalid_request', field: 'from' });
    expect(refusal({ from: '2026-03-11' }).message).to.equal('from: 2026-03-11 is after to (2026-03-10)');
  });
});
