// The lead aggregate, on its own so that what erases leads from elsewhere (a conversation's
// erasure) needs none of the capture's dependencies (the widget's).
import { type LeadCommand, type LeadEvent, type LeadState, leadDecider, leadEvents } from '../../domain/lead/lead';
import type { Aggregate } from '../command-handling/handle-command';

export const leadAggregate: Aggregate<LeadCommand, LeadEvent, LeadState> = { decider: leadDecider, events: leadEvents };
