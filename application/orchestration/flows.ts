// The flows the dispatcher runs (issue #14 point 3): what an SDK connection advertised in the
// `flows` of `capabilities.list`, stored by its last sync. The connector only advertises them;
// the platform runs them. This module reads the advertised JSON into a flow the runner
// understands, or says why it cannot (docs/orchestration-events.md, "Flows"), and maps a step's
// parameters from the event and earlier steps. Pure: no I/O.
//
// Accepted shape:
//   {
//     id: 'notify_on_order',                       // 1-100 of [A-Za-z0-9_.-]
//     trigger: 'shop.order.created'                // an event name or a `prefix.*`,
//            | ['shop.order.created', 'shop.refund.*']   // several,
//            | { event: 'shop.order.created' }      // or { event | events } (the SDK's style)
//     steps: [                                     // 1 to MAX_STEPS, run in order
//       { tool: 'notify_warehouse', parameters: { order_id: '$.payload.order_id' } },  // a tool of the same connector
//       { business_tool: 'crm_lookup', parameters: { email: '$.steps.0.output.email' } }, // a business tool (name or id)
//     ],
//     emits: [{ name: 'shop.order.notified', payload: { order: '$.payload.order_id' } }],  // optional follow-on events
//   }
// A parameter value that is a string starting with `$.` is a path: `$.payload...`,
// `$.steps.<n>.output...` (an earlier step of the same flow), `$.event.id|name|correlation_id|source`;
// `$` alone is nothing of these and is refused. A path that leads nowhere leaves the parameter
// out. Anything else is a literal; objects and arrays are mapped inside.
// A flow whose trigger cannot be read never matches; one that matches but whose steps or emits
// cannot be read is recorded as skipped with the reason (never a crash).

import { EVENT_NAME_PATTERN } from '../../domain/orchestration-event/orchestration-event';

export const MAX_STEPS = 20;
export const MAX_EMITS = 10;
const FLOW_ID = /^[A-Za-z0-9_.-]{1,100}$/;
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const TRIGGER_PREFIX = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.\*$/;

export type FlowStep = { kind: 'connector_tool'; tool: string; parameters: Record<string, unknown> } | { kind: 'business_tool'; tool: string; parameters: Record<string, unknown> };

export interface FlowEmit {
  name: string;
  payload: Record<string, unknown>;
}

export interface Flow {
  id: string;
  triggers: string[];
  steps: FlowStep[];
  emits: FlowEmit[];
}

/** An advertised flow as read: runnable, or with the reason it is not (its id and triggers when those could be read). */
export type ReadFlow = { ok: true; flow: Flow } | { ok: false; id: string | null; triggers: string[]; reason: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function readTriggers(trigger: unknown): string[] | null {
  const names = typeof trigger === 'string' ? [trigger] : Array.isArray(trigger) ? trigger : isRecord(trigger) ? (trigger.events ?? (trigger.event === undefined ? undefined : [trigger.event])) : undefined;
  if (!Array.isArray(names) || names.length === 0 || names.length > 20) return null;
  if (!names.every((name) => typeof name === 'string' && name.length <= 200 && (EVENT_NAME_PATTERN.test(name) || TRIGGER_PREFIX.test(name)))) return null;
  return names as string[];
}

/** Reads one advertised flow. */
export function readFlow(raw: unknown): ReadFlow {
  if (!isRecord(raw)) return { ok: false, id: null, triggers: [], reason: 'a flow must be an object' };
  const id = typeof raw.id === 'string' && FLOW_ID.test(raw.id) ? raw.id : null;
  const triggers = readTriggers(raw.trigger) ?? [];
  const refuse = (reason: string): ReadFlow => ({ ok: false, id, triggers, reason });
  if (id === null) return refuse('id must be 1 to 100 of letters, digits, _ . -');
  if (triggers.length === 0) return refuse('trigger must be an event name or prefix.* (or a list of them, or {event}/{events})');
  if (!Array.isArray(raw.steps) || raw.steps.length === 0 || raw.steps.length > MAX_STEPS) return refuse(`steps must be a list of 1 to ${MAX_STEPS} steps`);
  const steps: FlowStep[] = [];
  for (const [index, step] of raw.steps.entries()) {
    if (!isRecord(step)) return refuse(`steps.${index} must be an object`);
    const parameters = step.parameters ?? {};
    if (!isRecord(parameters)) return refuse(`steps.${index}.parameters must be an object`);
    if (typeof step.tool === 'string' && step.business_tool === undefined) {
      if (!TOOL_NAME.test(step.tool)) return refuse(`steps.${index}.tool is not a tool name`);
      steps.push({ kind: 'connector_tool', tool: step.tool, parameters });
    } else if (typeof step.business_tool === 'string' && step.tool === undefined) {
      if (!TOOL_NAME.test(step.business_tool)) return refuse(`steps.${index}.business_tool is not a tool name`);
      steps.push({ kind: 'business_tool', tool: step.business_tool, parameters });
    } else {
      return refuse(`steps.${index} must have exactly one of tool (a connector tool) or business_tool; ${Object.keys(step).join(', ') || 'nothing'} given`);
    }
  }
  const emits: FlowEmit[] = [];
  const rawEmits = raw.emits ?? [];
  if (!Array.isArray(rawEmits) || rawEmits.length > MAX_EMITS) return refuse(`emits must be a list of at most ${MAX_EMITS}`);
  for (const [index, emit] of rawEmits.entries()) {
    if (!isRecord(emit) || typeof emit.name !== 'string' || !EVENT_NAME_PATTERN.test(emit.name)) return refuse(`emits.${index}.name must be an event name`);
    const payload = emit.payload ?? {};
    if (!isRecord(payload)) return refuse(`emits.${index}.payload must be an object`);
    emits.push({ name: emit.name, payload });
  }
  return { ok: true, flow: { id, triggers, steps, emits } };
}

/** Whether an event name is one of the triggers (an exact name, or a whole-segment prefix `shop.order.*`). */
export function triggerMatches(triggers: readonly string[], name: string): boolean {
  return triggers.some((trigger) => (trigger.endsWith('.*') ? name.startsWith(trigger.slice(0, -1)) : trigger === name));
}

/** What paths read: the event and the outputs of the flow's steps so far. */
export interface MappingScope {
  event: { id: string; name: string; correlation_id: string; source: string | null };
  payload: Record<string, unknown>;
  steps: Array<{ output: unknown }>;
}

function resolvePath(path: string, scope: MappingScope): unknown {
  const segments = path.slice(2).split('.');
  let current: unknown = { event: scope.event, payload: scope.payload, steps: scope.steps };
  for (const segment of segments) {
    if (segment === '') return undefined;
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isRecord(current) && Object.prototype.hasOwnProperty.call(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

/** Maps a value: paths resolved, objects and arrays inside; undefined when a path leads nowhere. */
export function mapValue(value: unknown, scope: MappingScope): unknown {
  if (typeof value === 'string' && value.startsWith('$.')) return resolvePath(value, scope);
  if (Array.isArray(value)) return value.map((item) => mapValue(item, scope)).filter((item) => item !== undefined);
  if (isRecord(value)) {
    const mapped: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const resolved = mapValue(item, scope);
      if (resolved !== undefined) mapped[key] = resolved;
    }
    return mapped;
  }
  return value;
}

export const mapParameters = (parameters: Record<string, unknown>, scope: MappingScope): Record<string, unknown> => mapValue(parameters, scope) as Record<string, unknown>;
