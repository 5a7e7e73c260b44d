// The one check of an address a tenant gives the platform to call (handoff webhook, CRM, and
// later connector servers): its form (domain/shared/endpoint-url.ts), then the outbound guard
// of the deployment (https only, no private address; application/ports/outbound-http.ts).
// A refusal is 400 naming the field, with a code per reason.

import { endpointUrlProblem } from '../../domain/shared/endpoint-url';
import { invalid } from '../../domain/shared/errors';
import type { OutboundHttp } from '../ports/outbound-http';

export interface OutboundDependencies {
  outbound: OutboundHttp;
}

/** 400 (`invalid_url`, `insecure_url`, `private_address` or `unresolvable_host`, naming `field`) unless the platform may call `url`. */
export async function requireCallableEndpoint(deps: OutboundDependencies, url: string, field = 'url'): Promise<void> {
  const problem = endpointUrlProblem(url, field);
  if (problem) throw problem;
  const refusal = await deps.outbound.refusalOf(url);
  if (refusal) throw invalid(refusal.reason, `${field}: ${refusal.message}`, field);
}
