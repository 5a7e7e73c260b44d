import { expect } from 'chai';
import {
  CONVERSATION_STATUSES,
  CONVERSATION_TRANSITIONS,
  type ConversationEvent,
  type ConversationStatus,
  MAX_FEEDBACK_COMMENT_LENGTH,
  MAX_MESSAGE_LENGTH,
  MAX_TITLE_LENGTH,
  assistantAnswersIn,
  contactOf,
  conversationDecider,
  type ToolStepStatus,
} from '../../domain/conversation/conversation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(conversationDecider);
const AT = FIXED_NOW.toISOString();
const T = 't1';
const C = 'c1';
const USER = { kind: 'user' as const, id: 'u1' };
const AGENT = { kind: 'user' as const, id: 'agent-1' };

const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { conversation_id: C, tenant_id: T, workspace_id: 'w1', channel: 'console', title: 'Refunds', started_by: USER, started_at: AT },
};
const asked = (message_id: string, text = 'How do refunds work?'): ConversationEvent => ({
  type: 'UserMessagePosted',
  data: { conversation_id: C, tenant_id: T, message_id, text, author: USER, end_user_token_sealed: null, end_user_session_sealed: null, posted_at: AT },
});
const answer = { text: 'Within 30 days [1].', citations: [{ passage_id: '1', document_id: 'd1', chunk_id: 'k1', title: 'Policy' }], answered_from_knowledge: true, model: 'extractive', latency_ms: 12, usage: null };
const answered = (message_id: string, reply_to: string): ConversationEvent => ({ type: 'AssistantAnswered', data: { conversation_id: C, tenant_id: T, message_id, reply_to, ...answer, answered_at: AT } });
const failed = (reply_to: string): ConversationEvent => ({ type: 'AssistantFailed', data: { conversation_id: C, tenant_id: T, reply_to, code: 'engine_unavailable', message: 'the model did not answer', failed_at: AT } });
const statusChanged = (previous_status: ConversationStatus, status: ConversationStatus): ConversationEvent => ({
  type: 'ConversationStatusChanged',
  data: { conversation_id: C, tenant_id: T, status, previous_status, changed_at: AT },
});
const replied = (message_id: string, text = 'A person here.'): ConversationEvent => ({ type: 'AgentReplied', data: { conversation_id: C, tenant_id: T, message_id, text, agent: AGENT, replied_at: AT } });
const deleted: ConversationEvent = { type: 'ConversationDeleted', data: { conversation_id: C, tenant_id: T, deleted_at: AT } };

/** The events that bring a new conversation to `status` through allowed changes. */
const inStatus = (status: ConversationStatus): ConversationEvent[] => (status === 'open' ? [started] : [started, statusChanged('open', status)]);
const answeredOnce = [started, asked('m1'), answered('a1', 'm1')];

describe('conversation decider (spec 4.6)', () => {
  describe('starting', () => {
    it('starts an open conversation with a trimmed title', () => {
      spec.given([]).when({ type: 'StartConversation', data: { conversation_id: C, tenant_id: T, workspace_id: 'w1', channel: 'console', title: '  Refunds ', started_by: USER } }).then([started]);
    });

    it('refuses a bad title, naming it, and a second start', () => {
      const start = (title: string) => ({ type: 'StartConversation' as const, data: { conversation_id: C, tenant_id: T, workspace_id: null, channel: 'api' as const, title, started_by: USER } });
      spec.given([]).when(start('  ')).thenThrows('invalid', 'invalid_conversation', 'title');
      spec.given([]).when(start('x'.repeat(MAX_TITLE_LENGTH + 1))).thenThrows('invalid', 'invalid_conversation', 'title');
      spec.given([]).when(start('a\u202Eb')).thenThrows('invalid', 'invalid_conversation', 'title');
      spec.given([started]).when(start('Again')).thenThrows('conflict', 'conversation_exists');
    });

    it('answers every other command on a conversation that does not exist with 404', () => {
      spec.given([]).when({ type: 'RenameConversation', data: { title: 'x' } }).thenThrows('not_found', 'conversation_not_found');
      spec.given([]).when({ type: 'ChangeConversationStatus', data: { status: 'resolved' } }).thenThrows('not_found', 'conversation_not_found');
      spec.given([]).when({ type: 'PostAgentReply', data: { message_id: 'r1', text: 'hi', agent: AGENT } }).thenThrows('not_found', 'conversation_not_found');
      spec.given([]).when({ type: 'DeleteConversation', data: {} }).thenThrows('not_found', 'conversation_not_found');
    });
  });

  describe('status transitions', () => {
    const allowed: Array<[ConversationStatus, ConversationStatus]> = [
      ['open', 'pending'],
      ['open', 'handed_off'],
      ['open', 'resolved'],
      ['pending', 'open'],
      ['pending', 'handed_off'],
      ['pending', 'resolved'],
      ['handed_off', 'open'],
      ['handed_off', 'resolved'],
      ['resolved', 'open'],
    ];

    it('states exactly the allowed transitions', () => {
      const stated = CONVERSATION_STATUSES.flatMap((from) => CONVERSATION_TRANSITIONS[from].map((to) => `${from}->${to}`));
      expect(stated).to.have.members(allowed.map(([from, to]) => `${from}->${to}`));
    });

    for (const [from, to] of allowed) {
      it(`allows ${from} -> ${to}`, () => {
        spec.given(inStatus(from)).when({ type: 'ChangeConversationStatus', data: { status: to } }).then([statusChanged(from, to)]);
      });
    }

    for (const from of CONVERSATION_STATUSES) {
      for (const to of CONVERSATION_STATUSES) {
        if (from === to || allowed.some(([a, b]) => a === from && b === to)) continue;
        it(`refuses ${from} -> ${to} with 409 invalid_status_transition`, () => {
          spec.given(inStatus(from)).when({ type: 'ChangeConversationStatus', data: { status: to } }).thenThrows('conflict', 'invalid_status_transition');
        });
      }
      it(`records nothing when ${from} is set again`, () => {
        spec.given(inStatus(from)).when({ type: 'ChangeConversationStatus', data: { status: from } }).thenNothingHappened();
      });
    }

    it('reaches resolved -> handed_off only through open', () => {
      const resolved = [started, statusChanged('open', 'resolved')];
      spec.given(resolved).when({ type: 'ChangeConversationStatus', data: { status: 'handed_off' } }).thenThrows('conflict', 'invalid_status_transition');
      spec.given([...resolved, statusChanged('resolved', 'open')]).when({ type: 'ChangeConversationStatus', data: { status: 'handed_off' } }).then([statusChanged('open', 'handed_off')]);
    });

    it('keeps the reason given with a change (a visitor asking for a person), trimmed; an empty one is none', () => {
      const handOff = (reason: string) => spec.given([started]).when({ type: 'ChangeConversationStatus', data: { status: 'handed_off', reason } });
      const withReason = statusChanged('open', 'handed_off');
      handOff('  I want to speak to someone about my refund ').then([{ ...withReason, data: { ...withReason.data, reason: 'I want to speak to someone about my refund' } } as ConversationEvent]);
      handOff('   ').then([withReason]);
      handOff('x'.repeat(501)).thenThrows('invalid', 'invalid_request', 'reason');
      handOff('stop\u0000').thenThrows('invalid', 'invalid_request', 'reason');
    });
  });

  describe('user messages', () => {
    const post = (message_id: string, text = 'How do refunds work?') => ({
      type: 'PostUserMessage' as const,
      data: { message_id, text, author: USER, end_user_token_sealed: null, end_user_session_sealed: null },
    });

    it('records a message, trimmed, and nothing for the same message id again', () => {
      spec.given([started]).when(post('m1', '  How do refunds work?\n')).then([asked('m1')]);
      spec.given([started, asked('m1')]).when(post('m1')).thenNothingHappened();
    });

    it('refuses an empty or too long message, naming it', () => {
      spec.given([started]).when(post('m1', ' ')).thenThrows('invalid', 'invalid_message', 'message');
      spec.given([started]).when(post('m1', 'x'.repeat(MAX_MESSAGE_LENGTH + 1))).thenThrows('invalid', 'invalid_message', 'message');
    });

    it('opens a resolved conversation again, as a recorded status change', () => {
      spec.given(inStatus('resolved')).when(post('m1')).then([asked('m1'), statusChanged('resolved', 'open')]);
    });

    it('leaves other statuses as they are: a handed-off conversation stays with its person', () => {
      for (const status of ['open', 'pending', 'handed_off'] as const) spec.given(inStatus(status)).when(post('m1')).then([asked('m1')]);
    });
  });

  describe('answers', () => {
    const record = (message_id: string, reply_to: string) => ({ type: 'RecordAnswer' as const, data: { message_id, reply_to, ...answer } });
    const fail = (reply_to: string) => ({ type: 'RecordAnswerFailure' as const, data: { reply_to, code: 'engine_unavailable', message: 'the model did not answer' } });

    it('records one answer or one failure per user message', () => {
      spec.given([started, asked('m1')]).when(record('a1', 'm1')).then([answered('a1', 'm1')]);
      spec.given([started, asked('m1')]).when(fail('m1')).then([failed('m1')]);
    });

    it('records nothing for a second outcome of the same user message', () => {
      spec.given(answeredOnce).when(record('a2', 'm1')).thenNothingHappened();
      spec.given(answeredOnce).when(fail('m1')).thenNothingHappened();
      spec.given([started, asked('m1'), failed('m1')]).when(record('a1', 'm1')).thenNothingHappened();
    });

    it('answers each user message on its own', () => {
      spec.given([...answeredOnce, asked('m2')]).when(record('a2', 'm2')).then([answered('a2', 'm2')]);
    });

    it('refuses an answer to a message that is not a user message of this conversation', () => {
      spec.given([started]).when(record('a1', 'm9')).thenThrows('not_found', 'message_not_found');
      spec.given(answeredOnce).when(record('a2', 'a1')).thenThrows('not_found', 'message_not_found');
      spec.given([started, replied('r1')]).when(fail('r1')).thenThrows('not_found', 'message_not_found');
    });

    it('says the assistant answers in every status but handed_off', () => {
      expect(CONVERSATION_STATUSES.filter(assistantAnswersIn)).to.deep.equal(['open', 'pending', 'resolved']);
    });
  });

  describe("a human agent's reply", () => {
    const reply = (message_id: string, text = ' A person here. ') => ({ type: 'PostAgentReply' as const, data: { message_id, text, agent: AGENT } });

    it('pauses the assistant: an open or pending conversation becomes handed_off', () => {
      spec.given([started]).when(reply('r1')).then([replied('r1'), statusChanged('open', 'handed_off')]);
      spec.given(inStatus('pending')).when(reply('r1')).then([replied('r1'), statusChanged('pending', 'handed_off')]);
    });

    it('only replies in a handed-off or resolved conversation', () => {
      spec.given(inStatus('handed_off')).when(reply('r2')).then([replied('r2')]);
      spec.given(inStatus('resolved')).when(reply('r2')).then([replied('r2')]);
    });

    it('refuses an empty or too long reply, naming text', () => {
      spec.given([started]).when(reply('r1', '')).thenThrows('invalid', 'invalid_message', 'text');
      spec.given([started]).when(reply('r1', 'x'.repeat(MAX_MESSAGE_LENGTH + 1))).thenThrows('invalid', 'invalid_message', 'text');
    });

    it('keeps the assistant paused until the status is set back to open', () => {
      const handedOff = [started, replied('r1'), statusChanged('open', 'handed_off')];
      const state = handedOff.reduce(conversationDecider.evolve, conversationDecider.initialState());
      expect(state.status).to.equal('handed_off');
      const reopened = [...handedOff, statusChanged('handed_off', 'open')].reduce(conversationDecider.evolve, conversationDecider.initialState());
      expect(assistantAnswersIn(state.status as ConversationStatus)).to.equal(false);
      expect(assistantAnswersIn(reopened.status as ConversationStatus)).to.equal(true);
    });
  });

  describe('renaming and deleting', () => {
    it('renames with the previous title; nothing when unchanged', () => {
      spec.given([started]).when({ type: 'RenameConversation', data: { title: ' Returns ' } }).then([{ type: 'ConversationRenamed', data: { conversation_id: C, title: 'Returns', previous_title: 'Refunds' } }]);
      spec.given([started]).when({ type: 'RenameConversation', data: { title: 'Refunds ' } }).thenNothingHappened();
      spec.given([started]).when({ type: 'RenameConversation', data: { title: '' } }).thenThrows('invalid', 'invalid_conversation', 'title');
    });

    it('deletes, after which the conversation accepts nothing', () => {
      spec.given(answeredOnce).when({ type: 'DeleteConversation', data: {} }).then([deleted]);
      const gone = [...answeredOnce, deleted];
      spec.given(gone).when({ type: 'DeleteConversation', data: {} }).thenThrows('not_found', 'conversation_not_found');
      spec.given(gone).when({ type: 'RenameConversation', data: { title: 'x' } }).thenThrows('not_found', 'conversation_not_found');
      spec.given(gone).when({ type: 'ChangeConversationStatus', data: { status: 'resolved' } }).thenThrows('not_found', 'conversation_not_found');
      spec.given(gone).when({ type: 'PostAgentReply', data: { message_id: 'r1', text: 'hi', agent: AGENT } }).thenThrows('not_found', 'conversation_not_found');
      spec.given(gone).when({ type: 'GiveFeedback', data: { message_id: 'a1', rating: 'up', comment: '', given_by: USER } }).thenThrows('not_found', 'conversation_not_found');
      spec
        .given(gone)
        .when({ type: 'PostUserMessage', data: { message_id: 'm2', text: 'hello?', author: USER, end_user_token_sealed: null, end_user_session_sealed: null } })
        .thenThrows('not_found', 'conversation_not_found');
    });
  });

  describe('feedback', () => {
    const feedback = (message_id: string, rating: 'up' | 'down' = 'down', comment = ' Too vague ') => ({ type: 'GiveFeedback' as const, data: { message_id, rating, comment, given_by: USER } });
    const given: ConversationEvent = { type: 'FeedbackGiven', data: { conversation_id: C, tenant_id: T, message_id: 'a1', rating: 'down', comment: 'Too vague', given_by: USER, given_at: AT } };

    it('records feedback on an answer, comment trimmed (and may be empty)', () => {
      spec.given(answeredOnce).when(feedback('a1')).then([given]);
      spec.given(answeredOnce).when(feedback('a1', 'up', '')).then([{ type: 'FeedbackGiven', data: { ...given.data, rating: 'up', comment: '' } } as ConversationEvent]);
    });

    it('refuses a second feedback on the same answer with 409 feedback_given', () => {
      spec.given([...answeredOnce, given]).when(feedback('a1', 'up')).thenThrows('conflict', 'feedback_given');
    });

    it('takes feedback only on an answer of the assistant in this conversation', () => {
      spec.given(answeredOnce).when(feedback('m1')).thenThrows('not_found', 'message_not_found');
      spec.given([...answeredOnce, replied('r1')]).when(feedback('r1')).thenThrows('not_found', 'message_not_found');
      spec.given([started, asked('m1'), failed('m1')]).when(feedback('failed-m1')).thenThrows('not_found', 'message_not_found');
      spec.given(answeredOnce).when(feedback('a9')).thenThrows('not_found', 'message_not_found');
    });

    it('refuses a too long comment, naming it', () => {
      spec.given(answeredOnce).when(feedback('a1', 'down', 'x'.repeat(MAX_FEEDBACK_COMMENT_LENGTH + 1))).thenThrows('invalid', 'invalid_feedback', 'comment');
    });
  });

  describe('tool steps and the follow-up after approvals (#12 point 5)', () => {
    const step = (status: ToolStepStatus, extra: { step_id?: string; error?: { code: string; message: string } | null; prompt?: string } = {}) => ({
      ...(extra.prompt === undefined ? {} : { prompt: extra.prompt }),
      reply_to: 'm1',
      step_id: extra.step_id ?? '0:call_a',
      call_id: 'call_a',
      tool_name: 'cancel_order',
      tool_id: 'tool-1',
      tool_call_id: 'tc-1',
      status,
      error: extra.error ?? null,
    });
    const recordStep = (data: ReturnType<typeof step>) => ({ type: 'RecordToolStep' as const, data });
    const stepRecorded = (data: ReturnType<typeof step>): ConversationEvent => ({ type: 'AssistantToolStepRecorded', data: { ...data, conversation_id: C, tenant_id: T, recorded_at: AT } });
    const followUp = { message_id: 'f1', reply_to: 'm1', tool_call_ids: ['tc-1'], text: 'Order A-17 is cancelled.', citations: [], answered_from_knowledge: false, model: 'm', latency_ms: 5, usage: null, error: null };
    const followedUp: ConversationEvent = { type: 'AssistantFollowedUp', data: { ...followUp, conversation_id: C, tenant_id: T, answered_at: AT } };

    it('records a step of a turn, before or after its answer', () => {
      spec.given([started, asked('m1')]).when(recordStep(step('succeeded'))).then([stepRecorded(step('succeeded'))]);
      spec.given(answeredOnce).when(recordStep(step('awaiting_approval'))).then([stepRecorded(step('awaiting_approval'))]);
    });

    it('moves a step that awaited approval on once; the same outcome again, or any after a settled one, records nothing', () => {
      const waiting = [...answeredOnce, stepRecorded(step('awaiting_approval'))];
      spec.given(waiting).when(recordStep(step('awaiting_approval'))).thenNothingHappened();
      spec.given(waiting).when(recordStep(step('refused', { error: { code: 'refused', message: 'no' } }))).then([stepRecorded(step('refused', { error: { code: 'refused', message: 'no' } }))]);
      spec.given([...waiting, stepRecorded(step('succeeded'))]).when(recordStep(step('succeeded'))).thenNothingHappened();
      spec.given([...waiting, stepRecorded(step('succeeded'))]).when(recordStep(step('failed'))).thenNothingHappened();
      // Another step of the same turn is its own.
      spec.given(waiting).when(recordStep(step('awaiting_approval', { step_id: '1:call_a' }))).then([stepRecorded(step('awaiting_approval', { step_id: '1:call_a' }))]);
    });

    it('moves a connector step on from challenge or running (#13): a challenge again, then its outcome; nothing after that', () => {
      const challenged = [...answeredOnce, stepRecorded(step('challenge', { prompt: 'Enter the code' }))];
      spec.given(challenged).when(recordStep(step('challenge', { prompt: 'Enter the code' }))).thenNothingHappened();
      spec.given(challenged).when(recordStep(step('running'))).then([stepRecorded(step('running'))]);
      spec.given(challenged).when(recordStep(step('failed', { error: { code: 'denied', message: 'wrong code' } }))).then([stepRecorded(step('failed', { error: { code: 'denied', message: 'wrong code' } }))]);
      spec.given([...challenged, stepRecorded(step('running'))]).when(recordStep(step('succeeded'))).then([stepRecorded(step('succeeded'))]);
      spec.given([...challenged, stepRecorded(step('succeeded'))]).when(recordStep(step('challenge', { prompt: 'again' }))).thenNothingHappened();
    });

    it('records each follow-up message once (a turn may have several), which takes feedback like an answer', () => {
      spec.given(answeredOnce).when({ type: 'RecordFollowUp', data: followUp }).then([followedUp]);
      spec.given([...answeredOnce, followedUp]).when({ type: 'RecordFollowUp', data: followUp }).thenNothingHappened();
      const second = { ...followUp, message_id: 'f2', tool_call_ids: ['tc2'] };
      spec.given([...answeredOnce, followedUp]).when({ type: 'RecordFollowUp', data: second }).then([{ ...followedUp, data: { ...followedUp.data, ...second } } as ConversationEvent]);
      spec.given([...answeredOnce, followedUp])
        .when({ type: 'GiveFeedback', data: { message_id: 'f1', rating: 'up', comment: '', given_by: USER } })
        .then([{ type: 'FeedbackGiven', data: { conversation_id: C, tenant_id: T, message_id: 'f1', rating: 'up', comment: '', given_by: USER, given_at: AT } }]);
    });

    it('refuses a step or follow-up of a message that is not a user message of this conversation, and both on a deleted one', () => {
      spec.given(answeredOnce).when(recordStep({ ...step('succeeded'), reply_to: 'a1' })).thenThrows('not_found', 'message_not_found');
      spec.given(answeredOnce).when({ type: 'RecordFollowUp', data: { ...followUp, reply_to: 'm9' } }).thenThrows('not_found', 'message_not_found');
      spec.given([...answeredOnce, deleted]).when(recordStep(step('succeeded'))).thenThrows('not_found', 'conversation_not_found');
      spec.given([...answeredOnce, deleted]).when({ type: 'RecordFollowUp', data: followUp }).thenThrows('not_found', 'conversation_not_found');
    });
  });
  describe('clearing the end-user identity (the widget\'s clearIdentity())', () => {
    const askedWith = (message_id: string, sealed: { token?: string; session?: string }): ConversationEvent => ({
      type: 'UserMessagePosted',
      data: { conversation_id: C, tenant_id: T, message_id, text: 'Where is my order?', author: USER, end_user_token_sealed: sealed.token ?? null, end_user_session_sealed: sealed.session ?? null, posted_at: AT },
    });
    const clear = { type: 'ClearEndUserIdentity', data: {} } as const;
    const cleared: ConversationEvent = { type: 'EndUserIdentityCleared', data: { conversation_id: C, tenant_id: T, cleared_at: AT } };

    it('records the clear when a message since the last one carried a token or a session', () => {
      spec.given([started, askedWith('m1', { token: 'sealed-token' })]).when(clear).then([cleared]);
      spec.given([started, askedWith('m1', { session: 'sealed-session' }), asked('m2')]).when(clear).then([cleared]);
      spec.given([started, askedWith('m1', { token: 'sealed-1' }), cleared, askedWith('m2', { token: 'sealed-2' })]).when(clear).then([cleared]);
    });

    it('records nothing when nothing is held: no message carried one, or it was cleared already', () => {
      spec.given([started]).when(clear).thenNothingHappened();
      spec.given([started, asked('m1')]).when(clear).thenNothingHappened();
      spec.given([started, askedWith('m1', { token: 'sealed-token' }), cleared]).when(clear).thenNothingHappened();
      spec.given([started, askedWith('m1', { token: 'sealed-token' }), cleared, asked('m2')]).when(clear).thenNothingHappened();
    });

    it('is refused on a conversation that is absent or deleted', () => {
      spec.given([]).when(clear).thenThrows('not_found', 'conversation_not_found');
      spec.given([started, askedWith('m1', { token: 'sealed-token' }), deleted]).when(clear).thenThrows('not_found', 'conversation_not_found');
    });
  });
  describe('erasure (docs/personal-data.md)', () => {
    const erase = { type: 'EraseConversation', data: {} } as const;
    const erased: ConversationEvent = { type: 'ConversationErased', data: { conversation_id: C, tenant_id: T, erased_at: AT } };

    it('erases a live conversation, whatever its status, and one deleted before', () => {
      spec.given([started, asked('m1')]).when(erase).then([erased]);
      spec.given([started, statusChanged('open', 'handed_off')]).when(erase).then([erased]);
      spec.given([started, asked('m1'), deleted]).when(erase).then([erased]);
    });

    it('records nothing when it was erased already, and refuses one that does not exist', () => {
      spec.given([started, erased]).when(erase).thenNothingHappened();
      spec.given([started, deleted, erased]).when(erase).thenNothingHappened();
      spec.given([]).when(erase).thenThrows('not_found', 'conversation_not_found');
    });

    it('leaves the conversation deleted: it accepts nothing more', () => {
      spec.given([started, erased]).when({ type: 'PostUserMessage', data: { message_id: 'm2', text: 'Hello?', author: USER, end_user_token_sealed: null, end_user_session_sealed: null } }).thenThrows('not_found', 'conversation_not_found');
      spec.given([started, erased]).when({ type: 'DeleteConversation', data: {} }).thenThrows('not_found', 'conversation_not_found');
      spec.given([started, erased]).when({ type: 'RenameConversation', data: { title: 'x' } }).thenThrows('not_found', 'conversation_not_found');
    });
  });

  describe('the contact of a messaging channel (contactOf)', () => {
    const startedBy = (channel: 'whatsapp' | 'widget', id: string, contact?: string, contact_name?: string) => ({
      conversation_id: C,
      tenant_id: T,
      workspace_id: null,
      channel,
      title: 'Hi',
      started_by: { kind: 'end_user' as const, id },
      started_at: AT,
      ...(contact === undefined ? {} : { contact }),
      ...(contact_name === undefined ? {} : { contact_name }),
    });

    it('starts a WhatsApp conversation with its sender\'s number and name as its contact', () => {
      const { started_at, ...command } = startedBy('whatsapp', 'whatsapp:0a1b2c3d4e5f60718293a4b5c6d7e8f9', '16505551234', 'Sheena Nelson');
      const data = { ...command, started_at };
      spec.given([]).when({ type: 'StartConversation', data: command }).then([{ type: 'ConversationStarted', data }]);
      expect(contactOf(data)).to.deep.equal({ address: '16505551234', name: 'Sheena Nelson' });
      expect(contactOf(startedBy('whatsapp', 'whatsapp:0a1b2c3d4e5f60718293a4b5c6d7e8f9', '16505551234'))).to.deep.equal({ address: '16505551234', name: null });
    });

    it('reads the number a WhatsApp party id of old was, and none elsewhere', () => {
      expect(contactOf(startedBy('whatsapp', 'whatsapp:16505551234'))).to.deep.equal({ address: '16505551234', name: null });
      expect(contactOf(startedBy('whatsapp', 'whatsapp:0a1b2c3d4e5f60718293a4b5c6d7e8f9'))).to.equal(null);
      expect(contactOf(startedBy('widget', 'visitor:16505551234'))).to.equal(null);
      if (started.type === 'ConversationStarted') expect(contactOf(started.data)).to.equal(null);
    });

    it('reads an erased contact as erased', () => {
      expect(contactOf(startedBy('whatsapp', 'whatsapp:0a1b2c3d4e5f60718293a4b5c6d7e8f9', ERASED_PERSONAL_DATA, ERASED_PERSONAL_DATA))).to.deep.equal({ address: ERASED_PERSONAL_DATA, name: ERASED_PERSONAL_DATA });
    });
  });
});
