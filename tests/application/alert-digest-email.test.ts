// The text of an hour's alert digest (application/orchestration/alert-emails.ts): names by how
// many of their events stand, dead letters and expiries apart, the names past twenty counted
// together, and how to stop the emails.

import { expect } from 'chai';
import { alertDigestEmailOf } from '../../application/orchestration/alert-emails';
import { hourOf } from '../../domain/orchestration-alert-digest/alert-digest';

describe('alert digest email', () => {
  const hour = hourOf('2026-12-02T14:20:00.000Z');

  it('counts the standing events by name, the most first, and says how to see, retry and stop them', () => {
    const ends = new Map([
      ['crm.ticket.opened', { dead_letter: 2, expired: 1 }],
      ['shop.order.created', { dead_letter: 9, expired: 0 }],
      ['billing.invoice.paid', { dead_letter: 0, expired: 3 }],
    ]);
    const { subject, text } = alertDigestEmailOf(hour, 'Acme', ends, 'https://svc.example.test/notifications/unsubscribe?token=a.b');
    expect(subject).to.equal('[Acme] 15 more orchestration events dead-lettered or expired between 2026-12-02 14:00 and 15:00 UTC');
    expect(text.split('\n\n')).to.deep.equal([
      "Between 2026-12-02 14:00 and 15:00 UTC, 15 more orchestration events of Acme were dead-lettered or expired besides the one the hour's first alert told of, and still stand so:",
      'shop.order.created: 9 dead-lettered\nbilling.invoice.paid: 3 expired\ncrm.ticket.opened: 2 dead-lettered, 1 expired',
      'List them with their errors: GET /api/v1/org/events?status=dead_letter (or status=expired). Once the cause is fixed, retry every dead letter of a name at once: POST /api/v1/org/events/redrive {"name": "<name>"}.',
      "This summary comes once an hour is over, when more of Acme's events ended so within it than the one emailed at the time.\nOwners and admins get them. Turn them off for yourself: https://svc.example.test/notifications/unsubscribe?token=a.b (or PATCH /api/v1/me/notifications {\"orchestration_alerts\": false}); for everyone: the organization's setting orchestration_alert_emails (GraphQL update_settings).",
    ]);
  });

  it('lists twenty names and counts the others together; ties by name', () => {
    const ends = new Map(Array.from({ length: 23 }, (_, index) => [`shop.item${String(index).padStart(2, '0')}.sold`, { dead_letter: index === 22 ? 2 : 1, expired: 0 }]));
    const { text } = alertDigestEmailOf(hour, 'Acme', ends, null);
    const listed = text.split('\n\n')[1].split('\n');
    expect(listed).to.have.length(21);
    expect(listed[0]).to.equal('shop.item22.sold: 2 dead-lettered');
    expect(listed[1]).to.equal('shop.item00.sold: 1 dead-lettered');
    expect(listed[20]).to.equal('and 3 events of 3 other names');
    expect(text).to.contain('Turn them off for yourself: PATCH /api/v1/me/notifications {"orchestration_alerts": false}');
  });
});
