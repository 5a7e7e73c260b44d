// What the visitor sees, inside the widget's shadow root: the launcher (a button), the chat
// panel (a dialog, or the whole page in full-page mode) with its header (title, logo, the
// handoff button, close), the conversation (a log read out politely by screen readers),
// the lead form, the composer, and below it the lead form's button and the erasure of the
// conversation (asked to confirm first). The view only draws and reports what the visitor does;
// widget.ts decides what that means.

import { append, el, icon } from './dom';
import type { Citation, LeadField, Rating, StoredMessage, ToolStep, WidgetSettings } from './protocol';
import { WIDGET_CSS } from './styles';

export type Mode = 'launcher' | 'page';

export interface ViewActions {
  send(text: string): void;
  rate(messageId: string, rating: Rating): void;
  submitLead(fields: Partial<Record<LeadField, string>>): void;
  handoff(): void;
  /** The visitor confirmed: erase their conversation for good. */
  erase(): void;
  opened(): void;
}

const LEAD_LABELS: Record<LeadField, string> = { name: 'Name', email: 'Email', phone: 'Phone', company: 'Company', message: 'Message' };
const LEAD_TYPES: Partial<Record<LeadField, string>> = { email: 'email', phone: 'tel' };
const LEAD_AUTOCOMPLETE: Partial<Record<LeadField, string>> = { name: 'name', email: 'email', phone: 'tel', company: 'organization' };

const TOOL_WORDS: Record<string, string> = {
  requested: 'Working on it',
  running: 'Working on it',
  succeeded: 'Done',
  failed: 'Could not complete',
  awaiting_approval: 'Waiting for a team member to approve',
  challenge: 'Needs your answer',
};

/** The title a panel shows: the widget's, else the tenant's name. */
export const titleOf = (settings: WidgetSettings): string => settings.title || settings.assistant_name || settings.tenant.name || 'Chat';

export class WidgetView {
  readonly root: HTMLDivElement;
  private readonly launcher: HTMLButtonElement | null;
  private readonly panel: HTMLDivElement;
  private readonly log: HTMLDivElement;
  private readonly status: HTMLDivElement;
  private readonly input: HTMLTextAreaElement;
  private readonly sendButton: HTMLButtonElement;
  private readonly handoffButton: HTMLButtonElement | null;
  private readonly leadButton: HTMLButtonElement | null;
  private readonly leadForm: HTMLFormElement | null;
  private readonly eraseButton: HTMLButtonElement | null;
  private readonly eraseConfirm: HTMLElement | null;
  private readonly welcome: HTMLElement | null;
  private typing: HTMLElement | null = null;
  private placeholder: string;

  constructor(
    shadow: ShadowRoot,
    readonly mode: Mode,
    private readonly settings: WidgetSettings,
    private readonly actions: ViewActions,
  ) {
    applyStyles(shadow, settings);
    const title = titleOf(settings);
    this.placeholder = 'Type your message';
    this.root = el('div', { class: `svc is-${mode} is-${settings.position === 'bottom-left' ? 'left' : 'right'}`, part: 'widget' });
    applyColours(this.root, settings);

    this.launcher =
      mode === 'launcher'
        ? el('button', { type: 'button', class: 'launcher', 'aria-label': `Open chat: ${title}`, 'aria-expanded': 'false', 'aria-controls': 'svc-panel', 'aria-haspopup': 'dialog' }, icon(settings.launcher_icon))
        : null;

    const logo = settings.tenant.logo_url && /^https:\/\//i.test(settings.tenant.logo_url) ? el('img', { src: settings.tenant.logo_url, alt: '' }) : null;
    this.handoffButton = settings.features.handoff_button ? el('button', { type: 'button', class: 'handoff', disabled: true, title: 'Ask your question first' }, 'Talk to a person') : null;
    const closeButton = mode === 'launcher' ? el('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, '\u00d7') : null;

    this.log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-relevant': 'additions', 'aria-label': 'Conversation', tabindex: '0' });
    const welcomeText = settings.welcome_message || 'Hi! How can we help you today?';
    this.welcome = el('div', { class: 'msg assistant welcome' }, welcomeText);
    this.log.appendChild(this.welcome);
    this.status = el('div', { class: 'status', role: 'status', 'aria-live': 'polite' });

    this.leadForm = settings.features.lead_form && settings.features.lead_form_fields.length > 0 ? this.buildLeadForm(settings.features.lead_form_fields) : null;
    this.leadButton = this.leadForm ? el('button', { type: 'button', class: 'lead-open', 'aria-expanded': 'false' }, 'Leave your contact details') : null;
    this.eraseButton = settings.features.visitor_erasure ? el('button', { type: 'button', class: 'erase', 'aria-expanded': 'false', hidden: true }, 'Delete this conversation') : null;
    this.eraseConfirm = this.eraseButton ? this.buildEraseConfirm() : null;

    this.input = el('textarea', { id: 'svc-input', rows: '1', placeholder: this.placeholder, 'aria-label': 'Message', maxlength: '4000' });
    this.sendButton = el('button', { type: 'submit', class: 'primary send' }, 'Send');
    const composer = el('form', { class: 'composer', 'aria-label': 'Send a message' }, this.input, this.sendButton);

    this.panel = el(
      'div',
      mode === 'launcher'
        ? { id: 'svc-panel', class: 'panel', role: 'dialog', 'aria-modal': 'false', 'aria-labelledby': 'svc-title', hidden: true }
        : { id: 'svc-panel', class: 'panel', role: 'region', 'aria-labelledby': 'svc-title' },
      el('header', {}, logo, el('h2', { id: 'svc-title' }, title), this.handoffButton, closeButton),
      this.log,
      this.status,
      this.leadForm,
      this.eraseConfirm,
      composer,
      this.leadButton || this.eraseButton ? el('footer', {}, this.leadButton, this.eraseButton) : null,
    );
    append(this.root, this.panel, this.launcher);
    shadow.appendChild(this.root);

    this.launcher?.addEventListener('click', () => (this.isOpen ? this.close() : this.open()));
    closeButton?.addEventListener('click', () => this.close());
    this.handoffButton?.addEventListener('click', () => this.actions.handoff());
    this.leadButton?.addEventListener('click', () => this.toggleLeadForm());
    this.eraseButton?.addEventListener('click', () => this.toggleEraseConfirm());
    composer.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener('keydown', (event) => {
      // Enter sends, Shift+Enter is a new line; an IME composing a word keeps its Enter.
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        this.submit();
      }
    });
    this.panel.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      if (this.eraseConfirm && !this.eraseConfirm.hidden) {
        this.toggleEraseConfirm(false);
        event.stopPropagation();
        return;
      }
      if (this.leadForm && !this.leadForm.hidden) {
        this.toggleLeadForm(false);
        event.stopPropagation();
        return;
      }
      if (this.mode === 'launcher') {
        event.stopPropagation();
        this.close();
      }
    });
  }

  get isOpen(): boolean {
    return !this.panel.hidden;
  }

  open(): void {
    if (this.isOpen) return;
    this.panel.hidden = false;
    this.launcher?.setAttribute('aria-expanded', 'true');
    this.launcher?.setAttribute('aria-label', `Close chat: ${titleOf(this.settings)}`);
    this.input.focus();
    this.scrollDown();
    this.actions.opened();
  }

  close(): void {
    if (this.mode === 'page' || !this.isOpen) return;
    this.panel.hidden = true;
    this.launcher?.setAttribute('aria-expanded', 'false');
    this.launcher?.setAttribute('aria-label', `Open chat: ${titleOf(this.settings)}`);
    this.launcher?.focus();
  }

  /** The whole transcript again (after a resume): what the platform has is the truth. */
  showTranscript(messages: readonly StoredMessage[]): void {
    for (const node of [...this.log.children]) if (node !== this.welcome) node.remove();
    this.typing = null;
    for (const message of messages) this.showMessage(message);
  }

  /** The visitor's message as sent; `localId` until the platform names it. */
  addVisitorMessage(text: string, localId: string): void {
    this.hideTyping();
    this.add(el('div', { class: 'msg user', 'data-id': localId }, el('span', { class: 'sr' }, 'You: '), text));
  }

  renameMessage(oldId: string, newId: string): void {
    const bubble = this.bubble(oldId);
    if (bubble && !this.bubble(newId)) bubble.setAttribute('data-id', newId);
  }

  showTyping(): void {
    if (this.typing) return;
    this.typing = el('div', { class: 'msg assistant typing', 'aria-label': 'The assistant is writing' });
    this.add(this.typing);
  }

  hideTyping(): void {
    this.typing?.remove();
    this.typing = null;
  }

  /** A piece of an answer streaming in. */
  appendDelta(messageId: string, text: string): void {
    this.hideTyping();
    const bubble = this.bubble(messageId) ?? this.add(this.answerBubble(messageId, 'assistant'));
    bubble.querySelector('.text')!.append(text);
    this.scrollDown();
  }

  addCitation(messageId: string, citation: Citation): void {
    const bubble = this.bubble(messageId) ?? this.add(this.answerBubble(messageId, 'assistant'));
    let list = bubble.querySelector('ol.sources');
    if (!list) {
      const heading = el('p', { class: 'sources-title', id: `svc-sources-${messageId}` }, 'Sources');
      list = el('ol', { class: 'sources', 'aria-labelledby': `svc-sources-${messageId}` });
      bubble.querySelector('.text')!.after(heading, list);
    }
    if ([...list.querySelectorAll('li')].some((item) => item.getAttribute('data-passage') === citation.passage_id && item.getAttribute('data-document') === citation.document_id)) return;
    list.appendChild(el('li', { 'data-passage': citation.passage_id, 'data-document': citation.document_id }, citation.title || 'Document'));
  }

  /** A stored message: the visitor's, the assistant's final answer, or a team member's. */
  showMessage(message: StoredMessage): void {
    if (message.role === 'user') {
      if (!this.bubble(message.id)) this.add(el('div', { class: 'msg user', 'data-id': message.id }, el('span', { class: 'sr' }, 'You: '), message.text));
      return;
    }
    this.hideTyping();
    const existing = this.bubble(message.id);
    const bubble = existing ?? this.add(this.answerBubble(message.id, message.role));
    bubble.querySelector('.text')!.textContent = message.failed && !message.text ? 'The assistant could not answer this message.' : message.text;
    for (const citation of message.citations ?? []) this.addCitation(message.id, citation);
    if (message.role === 'assistant' && !message.failed) this.finishAnswer(message.id);
    if (message.feedback_rating) this.rated(message.id, message.feedback_rating, false);
  }

  /** An answer is complete: it can be rated now. */
  finishAnswer(messageId: string): void {
    const bubble = this.bubble(messageId);
    if (!bubble || !this.settings.features.feedback || bubble.querySelector('.rate')) return;
    const up = el('button', { type: 'button', 'aria-pressed': 'false', 'aria-label': 'Helpful', title: 'Helpful', 'data-rating': 'up' }, icon('up'));
    const down = el('button', { type: 'button', 'aria-pressed': 'false', 'aria-label': 'Not helpful', title: 'Not helpful', 'data-rating': 'down' }, icon('down'));
    const row = el('div', { class: 'rate', role: 'group', 'aria-label': 'Was this answer helpful?' }, up, down);
    for (const button of [up, down]) {
      button.addEventListener('click', () => this.actions.rate(bubble.getAttribute('data-id')!, button.getAttribute('data-rating') as Rating));
    }
    bubble.appendChild(row);
  }

  /** An answer rated: one rating per answer, so the buttons show it and take no other. */
  rated(messageId: string, rating: Rating, thank = true): void {
    for (const button of this.bubble(messageId)?.querySelectorAll<HTMLButtonElement>('.rate button') ?? []) {
      button.setAttribute('aria-pressed', String(button.getAttribute('data-rating') === rating));
      button.disabled = true;
    }
    if (thank) this.setStatus('Thanks for your feedback.');
  }

  toolStep(step: ToolStep): void {
    const words = TOOL_WORDS[step.status] ?? step.status;
    const text = step.status === 'failed' && step.error?.message ? `${words}: ${step.tool_name} (${step.error.message})` : `${words}: ${step.tool_name}`;
    let line = [...this.log.querySelectorAll<HTMLElement>('.tool')].find((node) => node.getAttribute('data-step') === step.step_id) ?? null;
    if (!line) line = this.add(el('div', { class: 'tool', 'data-step': step.step_id }));
    line.textContent = text;
    if (step.status === 'challenge') {
      this.hideTyping();
      this.add(el('div', { class: 'msg assistant challenge' }, step.prompt || 'Please answer to continue.'));
      this.placeholder = 'Type your answer';
      this.input.placeholder = this.placeholder;
      this.input.focus();
    }
  }

  note(text: string): void {
    this.add(el('div', { class: 'note' }, text));
  }

  showError(text: string): void {
    this.hideTyping();
    this.add(el('div', { class: 'error', role: 'alert' }, text));
  }

  setStatus(text: string): void {
    this.status.textContent = text;
  }

  setBusy(busy: boolean): void {
    this.sendButton.disabled = busy;
    this.input.setAttribute('aria-busy', String(busy));
    if (!busy) this.hideTyping();
  }

  /** With a conversation, a person can be asked for, and the conversation erased. */
  setConversation(conversationId: string | null): void {
    if (this.eraseButton) {
      this.eraseButton.hidden = conversationId === null;
      if (conversationId === null && !this.eraseConfirm!.hidden) this.toggleEraseConfirm(false, false);
    }
    if (!this.handoffButton || this.handoffButton.getAttribute('data-done') === 'true') return;
    this.handoffButton.disabled = conversationId === null;
    this.handoffButton.title = conversationId === null ? 'Ask your question first' : 'Ask for a person from the team';
  }

  handedOff(): void {
    if (this.handoffButton) {
      this.handoffButton.disabled = true;
      this.handoffButton.setAttribute('data-done', 'true');
      this.handoffButton.textContent = 'Person requested';
    }
    this.note('A person from the team will answer here.');
  }

  /** The conversation was erased (the lead left in it too): a new one starts, with a person to be asked for and details to be left again. */
  erased(): void {
    this.showTranscript([]);
    if (this.handoffButton) {
      this.handoffButton.removeAttribute('data-done');
      this.handoffButton.textContent = 'Talk to a person';
    }
    if (this.leadButton) this.leadButton.hidden = false;
    this.setConversation(null);
    this.note('Your conversation was deleted.');
    this.input.focus();
  }

  leadSent(): void {
    if (!this.leadForm) return;
    this.leadForm.reset();
    this.toggleLeadForm(false);
    this.leadButton!.hidden = true;
    this.note('Thank you! We will get back to you.');
    this.input.focus();
  }

  /** A refusal of the lead form: next to the field it names, or over the form. */
  leadProblem(field: string | undefined, message: string): void {
    if (!this.leadForm) return;
    this.clearLeadProblems();
    const input = field ? this.leadForm.querySelector<HTMLInputElement>(`[name="${CSS.escape(field)}"]`) : null;
    const problem = el('p', { class: 'problem', id: `svc-lead-problem`, role: 'alert' }, message);
    if (input) {
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', 'svc-lead-problem');
      input.after(problem);
      input.focus();
    } else {
      this.leadForm.querySelector('.actions')!.before(problem);
    }
  }

  private clearLeadProblems(): void {
    for (const node of this.leadForm?.querySelectorAll('.problem') ?? []) node.remove();
    for (const node of this.leadForm?.querySelectorAll('[aria-invalid]') ?? []) {
      node.removeAttribute('aria-invalid');
      node.removeAttribute('aria-describedby');
    }
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text || this.sendButton.disabled) return;
    this.input.value = '';
    this.placeholder = 'Type your message';
    this.input.placeholder = this.placeholder;
    this.actions.send(text);
  }

  private buildLeadForm(fields: readonly LeadField[]): HTMLFormElement {
    const inputs = fields.map((field) => {
      const control =
        field === 'message'
          ? el('textarea', { name: field, rows: '3', maxlength: '2000' })
          : el('input', { name: field, type: LEAD_TYPES[field] ?? 'text', autocomplete: LEAD_AUTOCOMPLETE[field], maxlength: '200', required: field === 'email' || (field === 'phone' && !fields.includes('email')) });
      return el('label', {}, LEAD_LABELS[field], control);
    });
    const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const form = el('form', { class: 'lead', 'aria-labelledby': 'svc-lead-title', hidden: true, novalidate: true }, el('h3', { id: 'svc-lead-title' }, 'Leave your contact details'), ...inputs, el('div', { class: 'actions' }, cancel, el('button', { type: 'submit', class: 'primary' }, 'Send details')));
    cancel.addEventListener('click', () => this.toggleLeadForm(false));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.clearLeadProblems();
      const values: Partial<Record<LeadField, string>> = {};
      for (const field of fields) {
        const value = (form.elements.namedItem(field) as HTMLInputElement | null)?.value.trim();
        if (value) values[field] = value;
      }
      if (!values.email && !values.phone) {
        this.leadProblem(fields.includes('email') ? 'email' : 'phone', 'Please give an email address or a phone number so we can reach you.');
        return;
      }
      this.actions.submitLead(values);
    });
    return form;
  }

  private buildEraseConfirm(): HTMLElement {
    const keep = el('button', { type: 'button', class: 'secondary' }, 'Keep it');
    const erase = el('button', { type: 'button', class: 'primary danger' }, 'Delete');
    const box = el(
      'div',
      { class: 'confirm', role: 'alertdialog', 'aria-labelledby': 'svc-erase-title', 'aria-describedby': 'svc-erase-text', hidden: true },
      el('h3', { id: 'svc-erase-title' }, 'Delete this conversation?'),
      el('p', { id: 'svc-erase-text' }, 'Its messages are erased for good, for you and for the team. This cannot be undone.'),
      el('div', { class: 'actions' }, keep, erase),
    );
    keep.addEventListener('click', () => this.toggleEraseConfirm(false));
    erase.addEventListener('click', () => {
      this.toggleEraseConfirm(false, false);
      this.actions.erase();
    });
    return box;
  }

  private toggleEraseConfirm(show = this.eraseConfirm?.hidden ?? false, refocus = true): void {
    if (!this.eraseConfirm || !this.eraseButton) return;
    this.eraseConfirm.hidden = !show;
    this.eraseButton.setAttribute('aria-expanded', String(show));
    // The safe choice has the focus.
    if (show) this.eraseConfirm.querySelector<HTMLElement>('.secondary')?.focus();
    else if (refocus) this.eraseButton.focus();
  }

  private toggleLeadForm(show = this.leadForm?.hidden ?? false): void {
    if (!this.leadForm || !this.leadButton) return;
    this.leadForm.hidden = !show;
    this.leadButton.setAttribute('aria-expanded', String(show));
    if (show) this.leadForm.querySelector<HTMLElement>('input, textarea')?.focus();
    else this.leadButton.focus();
  }

  private answerBubble(messageId: string, role: 'assistant' | 'agent'): HTMLElement {
    return el('div', { class: `msg ${role}`, 'data-id': messageId }, role === 'agent' ? el('span', { class: 'who' }, 'Team member') : el('span', { class: 'sr' }, 'Assistant: '), el('span', { class: 'text' }));
  }

  private bubble(messageId: string): HTMLElement | null {
    return [...this.log.querySelectorAll<HTMLElement>('.msg[data-id]')].find((node) => node.getAttribute('data-id') === messageId) ?? null;
  }

  private add<T extends HTMLElement>(node: T): T {
    // The typing dots stay last.
    if (this.typing && node !== this.typing) this.log.insertBefore(node, this.typing);
    else this.log.appendChild(node);
    this.scrollDown();
    return node;
  }

  private scrollDown(): void {
    this.log.scrollTop = this.log.scrollHeight;
  }
}

/** The base sheet, then the tenant's custom CSS: constructed sheets where the browser has them (no inline style for a page's CSP to refuse). */
function applyStyles(shadow: ShadowRoot, settings: WidgetSettings): void {
  const sheets = [WIDGET_CSS, settings.custom_css || ''].filter(Boolean);
  if ('adoptedStyleSheets' in shadow && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    shadow.adoptedStyleSheets = sheets.map((text) => {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(text);
      return sheet;
    });
    return;
  }
  for (const text of sheets) shadow.appendChild(el('style', {}, text));
}

const HEX = /^#[0-9a-fA-F]{6}$/;

/** Colours and theme tokens as custom properties, each set as one value (setProperty cannot smuggle a declaration in). */
function applyColours(root: HTMLElement, settings: WidgetSettings): void {
  const colour = (value: string | undefined, fallback: string): string => (value && HEX.test(value) ? value : fallback);
  const primary = colour(settings.colours?.primary ?? settings.primary_color, '#2563eb');
  root.style.setProperty('--svc-primary', primary);
  root.style.setProperty('--svc-background', colour(settings.colours?.background ?? settings.background_color, '#ffffff'));
  root.style.setProperty('--svc-text', colour(settings.colours?.text ?? settings.text_color, '#111827'));
  root.style.setProperty('--svc-on-primary', readableOn(primary));
  for (const [name, value] of Object.entries(settings.theme ?? {})) {
    if (/^[a-z][a-z0-9-]{0,39}$/.test(name) && typeof value === 'string') root.style.setProperty(`--svc-${name}`, value);
  }
}

/** Black or white, whichever reads better on the colour (WCAG relative luminance). */
function readableOn(hex: string): string {
  const channel = (index: number): number => {
    const value = parseInt(hex.slice(index, index + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return luminance > 0.179 ? '#111111' : '#ffffff';
}
