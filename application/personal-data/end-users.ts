// How the platform knows an organization's end users: a widget visitor the host site vouched for
// by a keyed digest of the organization and the host's user id, a WhatsApp sender by one of the
// organization and their number (and, for what was recorded before ids became digests, by the
// id of old). An organization names them by what it knows (the user id, the number); these are
// the party ids that finds them by (an end user's erasure, the conversations list's filter).

import { invalid } from '../../domain/shared/errors';
import type { Secrets } from '../ports/identity';
import { verifiedPartyId } from '../widget/widget-access';
import { senderPartyId } from '../whatsapp/whatsapp-webhook';

/** Who the end user is to the organization: exactly one of these. */
export type EndUser = { verified_user_id: string } | { whatsapp_number: string };

const HOST_USER_ID = /^[\x21-\x7e]{1,200}$/;
const WHATSAPP_NUMBER = /^\+?(\d{6,20})$/;

/** The end user's party ids: the keyed digest, and the id of old. 400 `invalid_request` naming the field for a malformed user id or number. */
export function endUserPartyIds(secrets: Pick<Secrets, 'digest'>, tenantId: string, endUser: EndUser): string[] {
  if ('verified_user_id' in endUser) {
    const userId = endUser.verified_user_id;
    if (!HOST_USER_ID.test(userId)) throw invalid('invalid_request', 'verified_user_id: expected the host site’s user id, 1 to 200 printable characters', 'verified_user_id');
    return [verifiedPartyId(secrets, tenantId, userId), `verified:${userId}`];
  }
  const digits = WHATSAPP_NUMBER.exec(endUser.whatsapp_number.replace(/[\s().-]/g, ''))?.[1];
  if (digits === undefined) throw invalid('invalid_request', 'whatsapp_number: expected a phone number in international format, 6 to 20 digits (e.g. +16505551234)', 'whatsapp_number');
  return [senderPartyId(secrets, tenantId, digits), `whatsapp:${digits}`];
}
