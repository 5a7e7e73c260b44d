// `POST /tenant/end-users/erase`: erases everything the organization holds of one of its end
// users, named by the host site's user id (a verified widget visitor) or a WhatsApp number
// (application/personal-data/end-user-erasure.ts); `GET /tenant/end-users/export` answers it,
// for their right of access (end-user-export.ts). docs/personal-data.md.

import Router from '@koa/router';
import * as t from 'io-ts';
import { type EndUser, eraseEndUser } from '../../../application/personal-data/end-user-erasure';
import { exportEndUser } from '../../../application/personal-data/end-user-export';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requestContextOf } from '../request-context';
import { single } from './query';

export const EraseEndUserBody = t.exact(t.partial({ verified_user_id: t.string, whatsapp_number: t.string }), 'EraseEndUserBody');

/** Exactly one way of naming the end user. */
export function endUserOf(body: t.TypeOf<typeof EraseEndUserBody>): EndUser {
  if (body.verified_user_id !== undefined && body.whatsapp_number !== undefined) throw invalid('invalid_request', 'whatsapp_number: name the end user one way, verified_user_id or whatsapp_number', 'whatsapp_number');
  if (body.verified_user_id !== undefined) return { verified_user_id: body.verified_user_id };
  if (body.whatsapp_number !== undefined) return { whatsapp_number: body.whatsapp_number };
  throw invalid('invalid_request', 'verified_user_id: expected the host site’s user id of a verified visitor, or whatsapp_number', 'verified_user_id');
}

export function tenantEndUsersRouter(deps: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();
  router.get('/end-users/export', async (ctx) => {
    const endUser = endUserOf({ verified_user_id: single(ctx.query, 'verified_user_id'), whatsapp_number: single(ctx.query, 'whatsapp_number') });
    ctx.body = await exportEndUser(deps, ctx.state.principal, endUser);
  });
  router.post('/end-users/erase', async (ctx) => {
    const endUser = endUserOf(decodeBody(EraseEndUserBody, ctx.request.body));
    ctx.body = await eraseEndUser(deps, ctx.state.principal, endUser, requestContextOf(ctx));
  });
  return router;
}
