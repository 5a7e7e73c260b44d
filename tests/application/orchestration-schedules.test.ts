// Reading advertised schedules and finding their occurrences (application/orchestration/schedules.ts),
// and the sync's event at schema version 2 (version 1 kept no schedules).

import { expect } from 'chai';
import { MAX_SCHEDULES, latestOccurrence, occurrenceKey, readSchedule, readSchedules, scheduleViews } from '../../application/orchestration/schedules';
import type { SdkConnectionDocument } from '../../projections/sdk-connections';
import { domainEvents } from '../../domain/events';

const limits = { maxPayloadBytes: 1024 };
const valid = { id: 'nightly', cron: '0 2 * * *', event: 'shop.stock.sync_due' };

function runnable(raw: unknown) {
  const read = readSchedule(raw, limits);
  if (!read.ok) throw new Error(read.reason);
  return read;
}

describe('orchestration schedules: reading what a connector advertised', () => {
  it('reads a schedule with its defaults: UTC, an empty payload, no label', () => {
    expect(runnable(valid).schedule).to.deep.equal({ id: 'nightly', label: null, cron: '0 2 * * *', timezone: 'UTC', event: 'shop.stock.sync_due', payload: {} });
  });

  it('says why a schedule cannot run, naming the field', () => {
    const reasons = (raw: unknown) => {
      const read = readSchedule(raw, limits);
      return read.ok ? null : read.reason;
    };
    expect(reasons('0 2 * * *')).to.equal('a schedule must be an object');
    expect(reasons({ ...valid, id: 'has space' })).to.match(/^id must be/);
    expect(reasons({ ...valid, cron: 7 })).to.match(/^cron must be a cron expression of five fields/);
    expect(reasons({ ...valid, cron: '0 0 2 * * *' })).to.match(/^cron: .*5 parts/);
    expect(reasons({ ...valid, cron: '0 25 * * *' })).to.match(/^cron: .*hour/);
    expect(reasons({ ...valid, timezone: 'Europe/Nowhere' })).to.match(/^timezone must be an IANA time zone/);
    expect(reasons({ ...valid, event: 'shop.order' })).to.match(/^event must be an event name/);
    expect(reasons({ ...valid, payload: [1] })).to.equal('payload must be an object');
    expect(reasons({ ...valid, payload: { text: 'x'.repeat(1024) } })).to.equal('payload must be at most 1024 bytes as JSON');
    expect(reasons({ ...valid, label: 'x'.repeat(201) })).to.match(/^label must be text/);
  });

  it(`runs the first ${MAX_SCHEDULES} schedules of a connection, each id once`, () => {
    const advertised = Array.from({ length: MAX_SCHEDULES + 1 }, (_, index) => ({ ...valid, id: `s${index}` }));
    const read = readSchedules([...advertised.slice(0, 2), { ...valid, id: 's0' }, ...advertised.slice(2)], limits);
    expect(read[2]).to.deep.equal({ ok: false, id: 's0', reason: 'id is taken by an earlier schedule of this connection' });
    expect(read.filter((schedule) => schedule.ok)).to.have.length(MAX_SCHEDULES - 1);
    expect(read[read.length - 1]).to.deep.equal({ ok: false, id: `s${MAX_SCHEDULES}`, reason: `a connection runs at most ${MAX_SCHEDULES} schedules` });
  });

  it('finds the latest occurrence after one time and at or before another', () => {
    const { pattern } = runnable({ ...valid, cron: '*/15 * * * *' });
    const at = (iso: string) => new Date(iso);
    expect(latestOccurrence(pattern, at('2026-12-01T10:00:00Z'), at('2026-12-01T10:14:59Z'))).to.equal(null);
    expect(latestOccurrence(pattern, at('2026-12-01T10:00:00Z'), at('2026-12-01T10:15:00Z'))?.toISOString()).to.equal('2026-12-01T10:15:00.000Z');
    expect(latestOccurrence(pattern, at('2026-12-01T09:59:59Z'), at('2026-12-01T10:50:00Z'))?.toISOString()).to.equal('2026-12-01T10:45:00.000Z');
  });

  it('runs a fixed-time schedule once across a daylight-saving change: after a skipped hour, and once in a repeated one', () => {
    const { pattern } = runnable({ ...valid, cron: '30 2 * * *', timezone: 'Europe/Paris' });
    // 2027-03-28: 02:00 local becomes 03:00 (02:30 does not exist); 2026-10-25: 03:00 becomes 02:00 (02:30 happens twice).
    expect(latestOccurrence(pattern, new Date('2027-03-27T12:00:00Z'), new Date('2027-03-28T12:00:00Z'))?.toISOString()).to.equal('2027-03-28T01:00:00.000Z');
    expect(pattern.nextRun(new Date('2026-10-25T00:30:00Z'))?.toISOString()).to.equal('2026-10-26T01:30:00.000Z');
  });

  it('names each occurrence by connection, schedule and time', () => {
    expect(occurrenceKey('c1', 'nightly', new Date('2026-12-02T01:00:00Z'))).to.equal('schedule:c1:nightly:2026-12-02T01:00:00.000Z');
  });

  it('reads a connection document of the read model\'s version 1 (served until the rebuild is swapped in) as having no schedules', () => {
    const v1 = { enabled: true } as unknown as Pick<SdkConnectionDocument, 'schedules' | 'schedules_since' | 'enabled'>;
    expect(scheduleViews(v1, limits, new Date())).to.deep.equal([]);
  });

  it('reads a sync recorded before schedules were kept (schema version 1) as having none', () => {
    const v1 = { tenant_id: 't1', connection_id: 'c1', via: 'capabilities.list', tools: [], flows: [], events: [], organization: null, sdk_name: null, sdk_version: null, synced_at: '2026-11-01T00:00:00.000Z' };
    const decoded = domainEvents.decode('SdkConnectionToolsSynced', v1, 1);
    expect(decoded).to.deep.equal({ ok: true, event: { type: 'SdkConnectionToolsSynced', data: { ...v1, schedules: [] } } });
  });
});
