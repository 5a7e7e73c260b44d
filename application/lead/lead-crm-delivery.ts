// Saga `lead_crm_delivery` (version 1): when a lead is captured (`LeadCaptured`) in an
// organization whose CRM connector is configured and on, and whose plan includes crm, it sends
// the lead to that CRM with the kind's documented create call (crm-requests.ts) through the
// outbound guard, and keeps every attempt, failure, scheduled retry and the final give-up as
// events of the lead (domain/lead), the pattern of application/handoff/handoff-delivery.ts.
//
// `leadCrmDelivery` is the process manager (pure): given the lead's events and an input, the
// next step. The saga runs it: the trigger arrives through the saga subscription and requests
// the delivery (once: a redelivered trigger requests nothing new); retries come from a scan of
// the `leads` read model for what is due (`runDue`), never from infrastructure redelivery,
// which is left for crashes. A CRM that answers anything but 2xx, or not at all within the time
// limit, is an outcome, recorded, not thrown; the CRM's error answer is kept (shortened) for the
// admins reading the lead list.
//
// Every attempt uses the configuration as it is then: a corrected URL or a new credential
// applies to the retries; a CRM turned off meanwhile (or a kind that needs a credential and has
// none) gives the delivery up. The webhook kind's body and `x-svc-delivery-id` (the lead's id)
// are the same on every attempt: the receiver's idempotency key. HubSpot, Salesforce and
// Pipedrive take no idempotency key: a process that stops between their answer and its record
// sends the lead again on its retry (at least once).

import { type CrmDelivery, type LeadCapturedData, type LeadCommand, type LeadEvent, type LeadState, leadDecider, leadStream } from '../../domain/lead/lead';
import { crmConfigStream } from '../../domain/crm-config/crm-config';
import { LEADS, type LeadDocument } from '../../projections/leads';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { crmConfigAggregate, enabledCrmConfig } from '../crm/crm-config';
import { entitlementsOf } from '../entitlement/entitlements';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { OutboundHttp } from '../ports/outbound-http';
import type { Where } from '../ports/read-store';
import type { ProcessManager } from '../sagas/process-manager';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { answerExcerpt, crmRecordIdOf, crmRequestOf } from './crm-requests';
import { leadAggregate } from './lead-aggregate';
import { messageOf } from '../../domain/shared/errors';

export const LEAD_CRM_DELIVERY = 'lead_crm_delivery';

/** The header that carries the lead's id on every attempt of a webhook delivery: the receiver's idempotency key. */
export const LEAD_DELIVERY_ID_HEADER = 'x-svc-delivery-id';
export const LEAD_EVENT_HEADER = 'x-svc-event';
export const LEAD_EVENT = 'lead.captured';
export const LEAD_USER_AGENT = 'svc-platform-crm/1';
/** A CRM's answer beyond this is not read: its status, id and the start of an error suffice. */
const MAX_CRM_ANSWER_BYTES = 256 * 1024;

export interface LeadCrmDeliveryPolicy {
  /** Attempts before the delivery is given up (CRM_DELIVERY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Delay after failed attempt n before attempt n+1, in ms. */
  backoffMs(attempt: number): number;
  /** How long one call may take (CRM_DELIVERY_TIMEOUT_MS). */
  timeoutMs: number;
  /** How long an attempt, or a requested delivery nobody picked up, may go without an outcome before it is taken as lost. */
  outcomeTimeoutMs: number;
}

export type LeadCrmDeliveryInput =
  | { type: 'CrmDeliveryRequested'; data: { lead_id: string } }
  /** The due scan found the lead waiting: a scheduled retry, or an attempt with no outcome. */
  | { type: 'CrmDeliveryDue'; data: { lead_id: string } }
  | { type: 'CrmAccepted'; data: { lead_id: string; attempt: number; status_code: number; crm_record_id: string | null } }
  | { type: 'CrmCallFailed'; data: { lead_id: string; attempt: number; status_code: number | null; error: string } }
  /** Before attempt `attempts + 1`: the CRM was turned off, or cannot be called as configured. */
  | { type: 'CrmDeliveryWithdrawn'; data: { lead_id: string; attempts: number; error: string } };

export type LeadCrmDeliveryOutput =
  /** Claim the attempt (StartCrmAttempt), then call the CRM; the answer comes back as an input. */
  | { type: 'SendLead'; data: { lead_id: string; attempt: number } }
  | Extract<LeadCommand, { type: 'RecordSentToCrm' | 'RecordCrmFailure' | 'AbandonCrmDelivery' }>;

export function leadCrmDelivery(policy: Pick<LeadCrmDeliveryPolicy, 'maxAttempts' | 'backoffMs' | 'outcomeTimeoutMs'>): ProcessManager<LeadCrmDeliveryInput, LeadEvent, LeadState, LeadCrmDeliveryOutput> {
  const afterFailure = (attempt: number, status_code: number | null, error: string, now: Date): LeadCrmDeliveryOutput[] =>
    attempt >= policy.maxAttempts
      ? [{ type: 'AbandonCrmDelivery', data: { attempt, status_code, error, reason: 'attempts_exhausted' } }]
      : [{ type: 'RecordCrmFailure', data: { attempt, status_code, error, next_attempt_at: new Date(now.getTime() + policy.backoffMs(attempt)).toISOString() } }];
  const overdue = (since: string, now: Date): boolean => Date.parse(since) + policy.outcomeTimeoutMs <= now.getTime();

  return {
    initialState: leadDecider.initialState,
    evolve: leadDecider.evolve,
    decide(input, state, { now }) {
      // A deleted lead ended its delivery when it was deleted.
      if (state.status !== 'captured' || state.delivery === null) return [];
      const delivery: CrmDelivery = state.delivery;
      const send = (attempt: number): LeadCrmDeliveryOutput[] => [{ type: 'SendLead', data: { lead_id: state.lead.lead_id, attempt } }];
      switch (input.type) {
        case 'CrmDeliveryRequested':
          // Sent, being sent, or waiting for its retry: a redelivered trigger asks for nothing.
          return delivery.status === 'requested' ? send(1) : [];
        case 'CrmDeliveryDue':
          switch (delivery.status) {
            case 'requested':
              return overdue(delivery.requested_at, now) ? send(1) : [];
            case 'retrying':
              return Date.parse(delivery.next_attempt_at) <= now.getTime() ? send(delivery.attempts + 1) : [];
            case 'sending':
              return overdue(delivery.started_at, now) ? afterFailure(delivery.attempts, null, `no outcome recorded within ${policy.outcomeTimeoutMs} ms of the attempt's start`, now) : [];
            default:
              return [];
          }
        case 'CrmAccepted':
          return delivery.status === 'sent' ? [] : [{ type: 'RecordSentToCrm', data: { attempt: input.data.attempt, status_code: input.data.status_code, crm_record_id: input.data.crm_record_id } }];
        case 'CrmCallFailed':
          return delivery.status === 'sending' && delivery.attempts === input.data.attempt ? afterFailure(input.data.attempt, input.data.status_code, input.data.error, now) : [];
        case 'CrmDeliveryWithdrawn':
          return (delivery.status === 'requested' || delivery.status === 'retrying') && delivery.attempts === input.data.attempts
            ? [{ type: 'AbandonCrmDelivery', data: { attempt: input.data.attempts, status_code: null, error: input.data.error, reason: 'withdrawn' } }]
            : [];
      }
    },
  };
}

export interface LeadCrmDeliveryDependencies extends CommandDependencies, ReadModelDependencies {
  secrets: Secrets;
  outbound: OutboundHttp;
}

/** Leads one due pass looks at per kind; the next pass takes the rest. */
const DUE_PAGE = 100;

export function leadCrmDeliverySaga(deps: LeadCrmDeliveryDependencies, policy: LeadCrmDeliveryPolicy & { concurrency: number }): Saga<'LeadCaptured'> {
  const process = leadCrmDelivery(policy);

  /** Feeds one input to the process manager over the lead's current state, and carries out what it decides. */
  async function run(leadId: string, input: LeadCrmDeliveryInput, causationId: string | null): Promise<void> {
    const stream = leadStream(leadId);
    const { state } = await loadAggregate(deps, leadAggregate, stream);
    if (state.status !== 'captured') return;
    const [first] = await deps.eventStore.readStream(stream, { maxCount: 1 });
    const context = { ...systemContext(first!.metadata.correlation_id, LEAD_CRM_DELIVERY, causationId ?? first!.id), tenant_id: state.lead.tenant_id };
    for (const output of process.decide(input, state, { now: deps.clock.now() })) {
      if (output.type === 'SendLead') await send(state.lead, output.data.attempt, context);
      else await handleCommand(deps, leadAggregate, stream, output, context);
    }
  }

  async function send(lead: LeadCapturedData, attempt: number, context: RequestContext): Promise<void> {
    const { lead_id } = lead;
    const withdraw = (error: string): Promise<void> => run(lead_id, { type: 'CrmDeliveryWithdrawn', data: { lead_id, attempts: attempt - 1, error } }, context.causation_id);
    const target = await enabledCrmConfig(deps, lead.tenant_id);
    if (!target) return withdraw('the CRM connector is turned off for this organization');
    let request;
    try {
      request = crmRequestOf(target, lead);
    } catch (error) {
      return withdraw(messageOf(error));
    }
    // The claim. No idempotency key on purpose: the append is checked against the revision
    // just read, so when two deliveries race for this attempt the loser re-reads, finds it
    // started, and appends nothing.
    const claimed = await handleCommand(deps, leadAggregate, leadStream(lead_id), { type: 'StartCrmAttempt', data: { attempt, kind: target.kind, url: request.url } }, context);
    if (claimed.events.length === 0) return;
    let outcome: LeadCrmDeliveryInput;
    try {
      const headers = { [LEAD_DELIVERY_ID_HEADER]: lead_id, [LEAD_EVENT_HEADER]: LEAD_EVENT, 'user-agent': LEAD_USER_AGENT };
      let status: number;
      let recordId: string | null = null;
      let excerpt = '';
      if (request.kind === 'signed') {
        const answer = await deps.outbound.postSigned({ url: request.url, secret: request.secret, body: request.body, timestampSeconds: Math.floor(deps.clock.now().getTime() / 1000), headers, timeoutMs: policy.timeoutMs });
        status = answer.status;
      } else {
        const answer = await deps.outbound.request({
          method: request.method,
          url: request.url,
          headers: { ...headers, ...request.headers },
          body: request.body,
          timeoutMs: policy.timeoutMs,
          maxResponseBytes: MAX_CRM_ANSWER_BYTES,
        });
        status = answer.status;
        recordId = crmRecordIdOf(target.kind, answer.body);
        excerpt = answerExcerpt(answer.body);
      }
      outcome =
        status >= 200 && status < 300
          ? { type: 'CrmAccepted', data: { lead_id, attempt, status_code: status, crm_record_id: recordId } }
          : { type: 'CrmCallFailed', data: { lead_id, attempt, status_code: status, error: `the CRM answered HTTP ${status}${excerpt ? `: ${excerpt}` : ''}` } };
    } catch (error) {
      outcome = { type: 'CrmCallFailed', data: { lead_id, attempt, status_code: null, error: messageOf(error) } };
    }
    await run(lead_id, outcome, context.causation_id);
  }

  /** Where a lead of this tenant is to be sent: the CRM configured, on, and in the plan; null otherwise. */
  async function crmWanted(tenantId: string): Promise<{ kind: CrmDelivery['kind']; url: string } | null> {
    const { state } = await loadAggregate(deps, crmConfigAggregate, crmConfigStream(tenantId));
    if (state.status !== 'configured' || !state.enabled) return null;
    const { features } = await entitlementsOf(deps, tenantId);
    return features.crm ? { kind: state.kind, url: state.url } : null;
  }

  /** Leads the read model shows as due; the process manager checks each against its stream. */
  async function due(now: Date): Promise<LeadDocument[]> {
    const lostBefore = new Date(now.getTime() - policy.outcomeTimeoutMs).toISOString();
    const queries: Array<{ where: Where; field: string }> = [
      { where: { crm_status: 'retrying', crm_next_attempt_at: { lte: now.toISOString() } }, field: 'crm_next_attempt_at' },
      { where: { crm_status: 'sending', crm_last_attempt_at: { lte: lostBefore } }, field: 'crm_last_attempt_at' },
      { where: { crm_status: 'requested', crm_requested_at: { lte: lostBefore } }, field: 'crm_requested_at' },
    ];
    const leads = deps.readStore.collection<LeadDocument>(LEADS);
    const pages = await Promise.all(queries.map(({ where, field }) => leads.find({ where, sort: { field, direction: 'asc' }, limit: DUE_PAGE })));
    return pages.flatMap((page) => page.items);
  }

  return {
    name: LEAD_CRM_DELIVERY,
    version: 1,
    filter: { kind: 'event_type', types: ['LeadCaptured'] },
    async handle(event) {
      const tenantId = event.data.tenant_id;
      const wanted = await crmWanted(tenantId);
      if (!wanted) return;
      const leadId = event.data.lead_id;
      const context = { ...systemContext(event.metadata.correlation_id, LEAD_CRM_DELIVERY, event.id), tenant_id: tenantId };
      // A redelivered trigger finds the delivery requested and records nothing.
      await handleCommand(deps, leadAggregate, leadStream(leadId), { type: 'RequestCrmDelivery', data: wanted }, context, { idempotencyKey: `${LEAD_CRM_DELIVERY}:${event.id}` });
      await run(leadId, { type: 'CrmDeliveryRequested', data: { lead_id: leadId } }, event.id);
    },
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now();
      await forEachConcurrently(await due(now), policy.concurrency, async (lead) => {
        try {
          await run(lead.id, { type: 'CrmDeliveryDue', data: { lead_id: lead.id } }, null);
        } catch (error) {
          // Stays due: the next pass tries again.
          logger.error({ err: error, lead_id: lead.id }, 'due CRM delivery failed');
        }
      });
    },
  };
}
