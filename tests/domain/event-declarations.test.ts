import { expect } from 'chai';
import * as t from 'io-ts';
import { domainEvents } from '../../domain/events';
import { declareEvent, eventGroup, eventRegistry } from '../../domain/shared/events';
import { parseStreamName, streamCategory, toStreamName } from '../../domain/shared/stream-names';

describe('event declarations and the registry', () => {
  const Renamed = declareEvent('ThingRenamed', t.type({ name: t.string, locale: t.string }), {
    version: 2,
    upcasters: { 1: (v1) => ({ ...v1, locale: 'en' }) },
  });
  const registry = eventRegistry([eventGroup('thing', [Renamed])]);

  it('upcasts data written with an older schema version, and decodes the current one as it is', () => {
    expect(registry.decode('ThingRenamed', { name: 'A' }, 1)).to.deep.equal({ ok: true, event: { type: 'ThingRenamed', data: { name: 'A', locale: 'en' } } });
    expect(registry.decode('ThingRenamed', { name: 'A', locale: 'fr' }, 2)).to.deep.equal({ ok: true, event: { type: 'ThingRenamed', data: { name: 'A', locale: 'fr' } } });
  });

  it('names what did not match, without showing the values', () => {
    const result = registry.decode('ThingRenamed', { name: 42, secret: 'hunter2' }, 1);
    expect(result).to.deep.equal({ ok: false, reason: 'mismatch', message: 'data.name: expected string, got number after upcasting from version 1 to 2' });
  });

  it('refuses an unknown type and a version newer than the declaration', () => {
    expect(registry.decode('Mystery', {}, 1)).to.include({ ok: false, reason: 'unknown_type' });
    expect(registry.decode('ThingRenamed', { name: 'A', locale: 'en' }, 3)).to.include({ ok: false, reason: 'unknown_version' });
  });

  it('refuses at declaration a missing upcaster, a type declared twice, a category twice, and a dash in a category', () => {
    expect(() => declareEvent('ThingMoved', t.type({}), { version: 3, upcasters: { 1: (v) => v } })).to.throw(/upcaster from each older version \(1, 2\)/);
    expect(() => eventRegistry([eventGroup('thing', [Renamed]), eventGroup('other', [Renamed])])).to.throw('event type ThingRenamed is declared twice (in thing and other)');
    expect(() => eventRegistry([eventGroup('thing', [Renamed]), eventGroup('thing', [])])).to.throw(/category thing is declared by two/);
    expect(() => eventGroup('access-denial', [])).to.throw(/no dash/);
    expect(() => streamCategory('Tenant')).to.throw(/camelCase/);
  });

  it('derives the platform registry from the aggregates: every type once, every category camelCase', () => {
    expect(domainEvents.types).to.include.members(['TenantCreated', 'UserRegistered', 'MemberRemoved', 'AccessDenied']);
    expect(new Set(domainEvents.types).size).to.equal(domainEvents.types.length);
    expect(domainEvents.categories).to.include.members(['tenant', 'accessDenial', 'reservation']);
    for (const category of domainEvents.categories) expect(category).to.match(/^[a-z][a-zA-Z0-9]*$/);
    expect(domainEvents.versionOf('MemberRemoved')).to.equal(2);
  });

  it('declares an aggregate\'s personal data once: its subject, the text fields of each type, the event that erases it', () => {
    const Noted = declareEvent('ThingNoted', t.type({ thing_id: t.string, note: t.string, size: t.number }));
    const Forgotten = declareEvent('ThingForgotten', t.type({ thing_id: t.string }));
    const things = eventRegistry([eventGroup('thing', [Noted, Forgotten], { subject: (data) => `thing:${String(data.thing_id)}`, fields: { ThingNoted: ['note'] }, erasedBy: 'ThingForgotten' })]);
    const personal = things.personalFieldsOf('ThingNoted');
    expect(personal?.fields).to.deep.equal(['note']);
    expect(personal?.subject({ thing_id: 't1', note: 'x', size: 1 })).to.equal('thing:t1');
    expect(things.personalFieldsOf('ThingForgotten')).to.equal(undefined);
    expect(things.erasingTypes).to.deep.equal(['ThingForgotten']);
    expect(things.erasedSubjectOf('ThingForgotten', { thing_id: 't1' })).to.equal('thing:t1');
    expect(things.erasedSubjectOf('ThingNoted', { thing_id: 't1' })).to.equal(null);

    expect(() => eventGroup('thing', [Noted], { subject: () => 's', fields: {}, erasedBy: 'ThingForgotten' as 'ThingNoted' })).to.throw(/erasing event ThingForgotten is not one of its types/);
    expect(() => eventGroup('thing', [Forgotten], { subject: () => 's', fields: { ThingNoted: ['note'] } as never, erasedBy: 'ThingForgotten' })).to.throw(/personal fields of ThingNoted/);
    // Texts inside fields are named by paths of at least two names, `[]` after an array's.
    const nested = eventGroup('thing', [Noted], { subject: () => 's', fields: {}, nested: { ThingNoted: ['parts[].label', 'error.message'] } });
    expect(nested.declarations[0].personal?.nested).to.deep.equal(['parts[].label', 'error.message']);
    for (const wrong of ['note', 'error..message', 'error.message[0]', 'Error.message', '.message']) {
      expect(() => eventGroup('thing', [Noted], { subject: () => 's', fields: {}, nested: { ThingNoted: [wrong as `${string}.${string}`] } }), wrong).to.throw(/personal text path/);
    }

    expect(domainEvents.erasingTypes).to.include.members(['ConversationErased', 'LeadErased']);
    expect(domainEvents.personalFieldsOf('UserMessagePosted')?.fields).to.deep.equal(['text']);
    expect(domainEvents.personalFieldsOf('LeadCaptured')?.fields).to.include.members(['name', 'email', 'phone']);
  });

  it('builds and parses stream names at the first dash', () => {
    const name = toStreamName(streamCategory('accessDenial'), '5f0c-42');
    expect(name).to.equal('accessDenial-5f0c-42');
    expect(parseStreamName(name)).to.deep.equal({ category: 'accessDenial', id: '5f0c-42' });
    expect(parseStreamName('$all')).to.deep.equal({ category: '$all', id: '' });
  });
});
