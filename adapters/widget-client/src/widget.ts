// One embedded widget: its settings, its visitor, its connection, and what each thing the
// visitor does becomes. A message goes over the WebSocket when it is ready, else over HTTP
// (POST /api/v1/widget/chat, streamed as Server-Sent Events): the visitor never waits on a
// socket that a proxy refuses. Feedback goes the same way; leads, handoff, the erasure of the
// conversation and identity clear are HTTP routes.

import { ApiError, type TurnEvent, WidgetApi } from './api';
import { ChatConnection } from './connection';
import type { Identity, LeadField, Rating, ServerFrame, WidgetSettings } from './protocol';
import { type Mode, WidgetView } from './view';
import { VisitorStore } from './visitor';

export interface WidgetOptions {
  token: string;
  /** The platform's base URL (no trailing slash). */
  base: string;
  mode: Mode;
  /** Where the widget lives: its shadow host. */
  host: HTMLElement;
}

/** How long a message waits for a socket that is still opening before it goes over HTTP. */
const SOCKET_WAIT_MS = 4_000;

/** Words for the refusals a visitor can meet; anything else shows the platform's own message. */
const PROBLEMS: Record<string, string> = {
  quota_exceeded: 'The assistant has answered all the messages it can for now. Please try again later.',
  assistant_unavailable: 'The assistant could not answer just now. Please try again.',
  rate_limited: 'That was a lot of messages at once. Please wait a moment and try again.',
  identity_required: 'Please sign in on this site to chat.',
  invalid_identity: 'We could not confirm who you are. Please sign in again.',
};

export class Widget {
  private readonly store: VisitorStore;
  private readonly api: WidgetApi;
  private readonly connection: ChatConnection;
  private view: WidgetView | null = null;
  private identity: Identity | null = null;
  private busy = false;
  private localIds = 0;
  /** The visitor's message sent over the socket and waiting for the platform's id. */
  private pendingLocalId: string | null = null;
  /** Its text, sent again once if its conversation is gone (erased or deleted since). */
  private pendingText: string | null = null;
  private transcriptLoaded = false;
  /** Ratings sent over the socket, waiting for their `ack`. */
  private readonly pendingRatings = new Map<string, Rating>();
  private refused = false;

  constructor(private readonly options: WidgetOptions) {
    this.store = new VisitorStore(options.token);
    this.api = new WidgetApi({ base: options.base, token: options.token, visitorId: () => this.store.load().visitor_id, identity: () => this.identity });
    const socketUrl = `${options.base.replace(/^http/i, 'ws')}/ws/chat?token=${encodeURIComponent(options.token)}`;
    this.connection = new ChatConnection(socketUrl, () => this.resumeFrame(), {
      frame: (frame) => this.onFrame(frame),
      lost: () => this.onLost(),
      refused: (code, reason) => this.onRefused(code, reason),
    });
  }

  /** Reads the settings and draws the widget; false when the platform refuses it (wrong token, origin not allowed). */
  async start(): Promise<boolean> {
    let settings: WidgetSettings;
    try {
      settings = await this.api.settings();
    } catch (error) {
      console.warn(`[svc widget] not shown: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
    const shadow = this.options.host.attachShadow({ mode: 'open' });
    this.view = new WidgetView(shadow, this.options.mode, settings, {
      send: (text) => void this.send(text),
      rate: (messageId, rating) => void this.rate(messageId, rating),
      submitLead: (fields) => void this.submitLead(fields),
      handoff: () => void this.handoff(),
      erase: () => void this.eraseConversation(),
      opened: () => this.connect(),
    });
    this.view.setConversation(this.store.load().conversation_id);
    if (this.options.mode === 'page') this.connect();
    return true;
  }

  open(): void {
    this.view?.open();
  }

  close(): void {
    this.view?.close();
  }

  identify(identity: Identity): void {
    const given: Identity = {};
    for (const key of ['user_id', 'user_hash', 'token', 'session'] as const) {
      const value = identity?.[key];
      if (typeof value === 'string' && value !== '') given[key] = value;
    }
    this.identity = Object.keys(given).length > 0 ? given : null;
    // A socket refused for want of an identity (4401) may be let in now.
    this.refused = false;
    // A signed-in user on a device that holds no conversation of theirs continues their latest
    // one, started on another device (their conversations are theirs anywhere).
    if (this.identity?.user_id && this.store.load().conversation_id === null) void this.continueLatest().finally(() => this.connection.restart());
    else this.connection.restart();
  }

  private async continueLatest(): Promise<void> {
    const userId = this.identity?.user_id;
    try {
      const latest = await this.api.latestConversation();
      // Only if nothing changed meanwhile (a message sent, another identity given).
      if (latest !== null && this.identity?.user_id === userId && this.store.load().conversation_id === null && !this.busy) {
        this.transcriptLoaded = false;
        this.setConversation(latest);
      }
    } catch {
      // Not found out: the user starts a new conversation, as on a first visit.
    }
  }

  /** Stops forwarding the end user's token and session (POST /widget/identity/clear) and forgets the identity here. */
  async clearIdentity(): Promise<void> {
    const verified = Boolean(this.identity?.user_id);
    try {
      await this.api.clearIdentity(this.store.load().conversation_id);
    } finally {
      this.identity = null;
      // A signed-in user's conversation is theirs, not the browser's: after sign-out it is neither shown nor continued.
      if (verified) {
        this.forgetConversation();
        this.view?.showTranscript([]);
      }
      this.connection.restart();
    }
  }

  private connect(): void {
    if (this.refused) return;
    this.connection.start();
    // A socket that will not open: the transcript comes over HTTP.
    void this.connection.whenReady(SOCKET_WAIT_MS).then((ready) => {
      if (!ready) void this.loadTranscriptOverHttp();
    });
  }

  private resumeFrame() {
    const memory = this.store.load();
    return { type: 'resume' as const, visitor_id: memory.visitor_id, conversation_id: memory.conversation_id, ...(this.identity ? { identity: this.identity } : {}) };
  }

  private async loadTranscriptOverHttp(): Promise<void> {
    const conversationId = this.store.load().conversation_id;
    if (this.transcriptLoaded || this.connection.ready || conversationId === null) return;
    try {
      const messages = await this.api.messages(conversationId);
      if (this.connection.ready) return;
      this.transcriptLoaded = true;
      this.view?.showTranscript(messages);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) this.forgetConversation();
    }
  }

  private onFrame(frame: ServerFrame): void {
    const view = this.view;
    if (!view) return;
    switch (frame.type) {
      case 'ready': {
        view.setStatus('');
        this.setConversation(frame.conversation_id);
        // What the platform has is the truth: a turn cut off by a lost socket shows as it ended,
        // and a conversation that is not this visitor's (any more) is not shown.
        if (!this.busy) view.showTranscript(frame.conversation_id === null ? [] : (frame.messages ?? []));
        this.transcriptLoaded = true;
        return;
      }
      case 'message':
        // The conversation is known from the turn's first frame (a new one for a first message).
        if (frame.conversation_id) this.setConversation(frame.conversation_id);
        if (frame.message.role === 'user') {
          if (frame.client_message_id) view.renameMessage(frame.client_message_id, frame.message.id);
          else if (this.pendingLocalId) view.renameMessage(this.pendingLocalId, frame.message.id);
          this.pendingLocalId = null;
          view.showMessage(frame.message);
          if (this.busy) view.showTyping();
        } else {
          view.showMessage(frame.message);
        }
        return;
      case 'delta':
        return view.appendDelta(frame.message_id, frame.text);
      case 'citation':
        return view.addCitation(frame.message_id, frame.citation);
      case 'tool':
        return view.toolStep(frame.step);
      case 'error': {
        // A conversation the platform no longer continues for this visitor (erased in another
        // tab, deleted by the organization): a new one starts, with the message it refused.
        if (frame.code === 'conversation_not_found') {
          this.forgetConversation();
          const text = this.pendingText;
          if (this.busy && this.pendingLocalId !== null && text !== null && frame.client_message_id === this.pendingLocalId) {
            this.pendingText = null;
            if (!this.connection.send({ type: 'message', text, client_message_id: this.pendingLocalId })) void this.sendOverHttp(text, this.pendingLocalId);
          }
          return;
        }
        const rating = frame.message_id !== undefined ? this.pendingRatings.get(frame.message_id) : undefined;
        if (frame.message_id !== undefined && rating !== undefined) {
          this.pendingRatings.delete(frame.message_id);
          // One rating per answer: one given before (another tab) stands.
          if (frame.code === 'feedback_given') return view.rated(frame.message_id, rating);
          return view.showError(frame.message || 'Your feedback could not be recorded.');
        }
        this.endTurn();
        return view.showError(PROBLEMS[frame.code] ?? frame.message ?? 'Something went wrong.');
      }
      case 'ack': {
        const rating = frame.message_id !== undefined ? this.pendingRatings.get(frame.message_id) : undefined;
        if (frame.message_id !== undefined && rating !== undefined) {
          this.pendingRatings.delete(frame.message_id);
          view.rated(frame.message_id, rating);
        }
        return;
      }
      case 'done':
        this.setConversation(frame.conversation_id);
        if (frame.message_id) view.finishAnswer(frame.message_id);
        else if (frame.paused) view.note('Your message was passed on to the team.');
        this.endTurn();
        return;
      case 'pong':
        return;
    }
  }

  private onLost(): void {
    // Unacknowledged ratings are dropped: the buttons stay unpressed, to be clicked again.
    this.pendingRatings.clear();
    if (this.busy) {
      // The answer may still have been recorded: the next `ready` shows it.
      this.endTurn();
    }
    this.view?.setStatus(this.connection.blocked ? '' : 'Reconnecting\u2026');
    if (this.connection.blocked) void this.loadTranscriptOverHttp();
  }

  private onRefused(code: number, reason: string): void {
    this.refused = true;
    this.endTurn();
    console.warn(`[svc widget] the platform refused the connection (${code}${reason ? `: ${reason}` : ''})`);
    this.view?.setStatus('');
  }

  private async send(text: string): Promise<void> {
    const view = this.view;
    if (!view || this.busy) return;
    this.busy = true;
    view.setBusy(true);
    const localId = `local-${++this.localIds}`;
    view.addVisitorMessage(text, localId);
    view.showTyping();
    if (!this.connection.ready && !this.connection.blocked && !this.refused) {
      this.connection.start();
      await this.connection.whenReady(SOCKET_WAIT_MS);
    }
    if (this.connection.send({ type: 'message', text, client_message_id: localId })) {
      this.pendingLocalId = localId;
      this.pendingText = text;
      return;
    }
    await this.sendOverHttp(text, localId);
  }

  private async sendOverHttp(text: string, localId: string): Promise<void> {
    const view = this.view!;
    const answerId = `${localId}-answer`;
    let answerShown = false;
    const onEvent = (event: TurnEvent): void => {
      switch (event.kind) {
        case 'delta':
          answerShown = true;
          return view.appendDelta(answerId, event.text);
        case 'citation':
          return view.addCitation(answerId, event.citation);
        case 'tool':
          return view.toolStep(event.step);
        case 'error':
          return view.showError(PROBLEMS[event.code] ?? event.message);
        case 'done':
          this.setConversation(event.conversation_id);
          view.renameMessage(localId, event.user_message_id);
          if (event.message_id && answerShown) {
            view.renameMessage(answerId, event.message_id);
            view.finishAnswer(event.message_id);
          } else if (event.paused) {
            view.note('Your message was passed on to the team.');
          }
          return;
      }
    };
    try {
      await this.api.chat({ message: text, conversation_id: this.store.load().conversation_id }, onEvent);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conversation_not_found') {
        // Not this visitor's conversation any more (a new identity): start a new one.
        this.forgetConversation();
        try {
          await this.api.chat({ message: text, conversation_id: null }, onEvent);
        } catch (again) {
          this.showProblem(again);
        }
      } else {
        this.showProblem(error);
      }
    } finally {
      this.endTurn();
    }
  }

  private async rate(messageId: string, rating: Rating): Promise<void> {
    if (messageId.startsWith('local-') || this.pendingRatings.has(messageId)) return;
    // Over the socket the `ack` (or an error naming the message) settles it.
    this.pendingRatings.set(messageId, rating);
    if (this.connection.send({ type: 'feedback', message_id: messageId, rating })) return;
    this.pendingRatings.delete(messageId);
    try {
      await this.api.feedback(messageId, rating);
      this.view?.rated(messageId, rating);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'feedback_given') this.view?.rated(messageId, rating);
      else this.showProblem(error);
    }
  }

  private async submitLead(fields: Partial<Record<LeadField, string>>): Promise<void> {
    const conversationId = this.store.load().conversation_id;
    try {
      await this.api.lead({ ...fields, ...(conversationId ? { conversation_id: conversationId } : {}), page_url: location.href.slice(0, 2000) });
      this.view?.leadSent();
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) this.view?.leadProblem(error.field, error.message);
      else this.showProblem(error);
    }
  }

  private async handoff(): Promise<void> {
    const conversationId = this.store.load().conversation_id;
    if (!conversationId) return;
    try {
      await this.api.handoff(conversationId);
      this.view?.handedOff();
    } catch (error) {
      this.showProblem(error);
    }
  }

  /** Erases the visitor's conversation for good; a new one starts. */
  private async eraseConversation(): Promise<void> {
    const conversationId = this.store.load().conversation_id;
    if (!conversationId) return;
    // The answer under way would be recorded in it: it ends first.
    if (this.busy) return this.view?.setStatus('Please wait for the answer, then delete the conversation.');
    try {
      await this.api.eraseConversation(conversationId);
    } catch (error) {
      // Not theirs any more (erased in another tab, another identity): nothing left to erase here either.
      if (!(error instanceof ApiError && error.code === 'conversation_not_found')) return this.showProblem(error);
    }
    this.forgetConversation();
    if (!this.connection.blocked) {
      // The socket resumes without it (its next message would go to the erased one), then the view says so.
      this.connection.restart();
      await this.connection.whenReady(SOCKET_WAIT_MS);
    }
    this.view?.erased();
  }

  private setConversation(conversationId: string | null): void {
    this.store.setConversation(conversationId);
    this.view?.setConversation(conversationId);
  }

  private forgetConversation(): void {
    this.setConversation(null);
  }

  private endTurn(): void {
    this.busy = false;
    this.pendingLocalId = null;
    this.pendingText = null;
    this.view?.setBusy(false);
  }

  private showProblem(error: unknown): void {
    if (error instanceof ApiError) this.view?.showError(PROBLEMS[error.code] ?? error.message);
    else this.view?.showError('The chat could not reach the server. Please check your connection and try again.');
  }
}
