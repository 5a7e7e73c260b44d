// The embedded assistant engine, used when no model is configured (LLM_BASE_URL and LLM_MODEL
// unset). It invents nothing: it answers with the sentences of the retrieved passages that
// best match the question, quoted word for word and cited as [n], and when no passage shares a
// meaningful word with the question it says plainly that the knowledge base has nothing about
// it. Deterministic (the same question and passages give the same answer) and cheap: a few
// passages of a few hundred words each, scanned once.
//
// How it picks: the question's words, lower-cased, without accents, without the words every
// question has ("what", "the", "please"), lightly stemmed ("refunds", "refunded" -> "refund").
// A passage is relevant when its text, title or heading shares at least one of them. Of the
// relevant passages (in the order retrieval ranked them, at most MAX_QUOTED_PASSAGES), the
// sentences with the most matching words (rarer words among the passages weigh more) are
// quoted, at most MAX_SENTENCES_PER_PASSAGE each, in their own order.
//
// Tools: it never calls one. When tools are offered and the question asks to act, it says
// first, plainly, that it cannot take actions without a language model configured, and then
// answers from the passages as always. "Asks to act" is a deliberately simple rule
// (`asksToAct`): the question holds one of ACTION_VERBS ("cancel my order", "please book ..."),
// or every word of a tool's name ("order status" for `order_status`, "cancel ... order" for
// `cancelOrder`). A question that only mentions such a word gets the sentence too: harmless,
// as the passages' answer follows it.

import { AssistantEngineError, type AssistantChunk, type AssistantEngine, type AssistantRequest, type Passage, type ToolSpec } from '../../application/ports/assistant-engine';

export const EXTRACTIVE_MODEL = 'extractive';

const MAX_QUOTED_PASSAGES = 3;
const MAX_SENTENCES_PER_PASSAGE = 2;
/** A "sentence" longer than this (a table row, a run-on paragraph) is quoted up to here, marked with an ellipsis. */
const MAX_QUOTE_CHARACTERS = 400;

/**
 * Words that carry no subject: question words, pronouns, auxiliaries, courtesy, and the
 * commonest function words of the languages tenants most often set (en, fr, de, es).
 */
const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below between both but by can cannot could
  did do does doing done down during each either else ever every few for from further get gets getting give go goes going got had has have having he her
  here hers herself him himself his how however i if in into is it its itself just know let like make many may me might more most much must my myself
  need no nor not now of off often on once only or other our ours ourselves out over own please really same say she should so some such tell than thank
  thanks that the their theirs them themselves then there these they this those through to too under until up us use very want was we were what whats
  when where whether which while who whom whose why will with would yes yet you your yours yourself yourselves hello hi hey today tomorrow yesterday
  ok okay dont doesnt didnt cant wont isnt arent im ive id youre
  le la les un une des du de et est sont ce cette ces que qui quoi pour par avec dans sur pas ne je tu il elle nous vous ils elles mon ma mes votre vos
  comment quel quelle quels quelles est-ce au aux ou
  der die das den dem des ein eine einen einem und ist sind nicht mit von zu im wie was wer wo ich du er sie wir ihr mein meine ihre auf fur
  el los las unos unas y es son del al por para con que como cual cuales donde quien mi mis su sus yo tu usted nosotros`.split(/\s+/),
);

/** Accent-free lower case, so "Rückerstattung" and "ruckerstattung" match. */
const folded = (text: string): string => text.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, '');

/** A light, consistent stem: the same for "refund", "refunds", "refunded", "refunding". */
function stem(word: string): string {
  let stemmed = word;
  if (stemmed.length > 4 && stemmed.endsWith('ies')) stemmed = `${stemmed.slice(0, -3)}y`;
  else if (stemmed.length > 3 && stemmed.endsWith('s') && !stemmed.endsWith('ss')) stemmed = stemmed.slice(0, -1);
  if (stemmed.length > 5 && stemmed.endsWith('ing')) stemmed = stemmed.slice(0, -3);
  else if (stemmed.length > 4 && stemmed.endsWith('ed')) stemmed = stemmed.slice(0, -2);
  if (stemmed.length > 3 && stemmed.endsWith('e')) stemmed = stemmed.slice(0, -1);
  // "shipping" -> "shipp" -> "ship", as "ship" itself.
  if (stemmed.length > 3 && stemmed[stemmed.length - 1] === stemmed[stemmed.length - 2] && !/[aeiouls]/.test(stemmed[stemmed.length - 1])) stemmed = stemmed.slice(0, -1);
  return stemmed;
}

/** The meaningful terms of a text: no stopwords, no single letters; numbers kept. */
export function meaningfulTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const word of folded(text).match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOPWORDS.has(word)) continue;
    if (word.length < 2 && !/\d/.test(word)) continue;
    terms.add(stem(word));
  }
  return terms;
}

/** Sentences of a passage: lines first (lists, tables, headings), then sentence ends within a line. */
function sentencesOf(text: string): string[] {
  return text
    .split(/\r?\n+/)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=\S)/))
    .map((sentence) => sentence.replace(/^[#>\s]+/, '').replace(/\s+/g, ' ').trim())
    .filter((sentence) => /[\p{L}\p{N}]/u.test(sentence));
}

function quotable(sentence: string): string {
  const characters = [...sentence];
  return characters.length <= MAX_QUOTE_CHARACTERS ? sentence : `${characters.slice(0, MAX_QUOTE_CHARACTERS).join('').trimEnd()}…`;
}

/**
 * Verbs that ask for an action rather than knowledge, in their stemmed form (see `stem`). Words
 * that are as often nouns of a question about policy ("refund", "return", "order") are left out.
 */
const ACTION_VERBS = new Set(
  `cancel create book reserve reschedule schedule update change modify edit delete remove add send submit pay buy purchase subscribe unsubscribe
  register reset renew upgrade downgrade activate deactivate block unblock assign approve transfer track resend`
    .split(/\s+/)
    .map((verb) => stem(verb)),
);

/** The words of a tool's name: `cancel_order`, `cancel-order` and `cancelOrder` are "cancel order". */
function nameTerms(name: string): Set<string> {
  return meaningfulTerms(name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' '));
}

/** Whether the question asks to act, by the rule in the header: an action verb, or every word of an offered tool's name. */
export function asksToAct(question: string, tools: readonly Pick<ToolSpec, 'name'>[]): boolean {
  if (tools.length === 0) return false;
  const asked = meaningfulTerms(question);
  if ([...asked].some((term) => ACTION_VERBS.has(term))) return true;
  return tools.some((tool) => {
    const terms = nameTerms(tool.name);
    return terms.size > 0 && [...terms].every((term) => asked.has(term));
  });
}

interface Phrases {
  cannotAct: string;
  found: string;
  from: (title: string) => string;
  nothing: string;
}

/** The engine's own few words, in the tenant's language where it has them (English otherwise). */
const PHRASES: Record<string, Phrases> = {
  en: {
    cannotAct: 'I cannot take actions or look things up in your systems here: no language model is configured for this assistant, so it can only quote the knowledge base.',
    found: 'Here is what the knowledge base says:',
    from: (title) => `From "${title}"`,
    nothing: 'I could not find anything about this in the knowledge base, so I cannot answer it from there. Try other words, or ask a person.',
  },
  fr: {
    cannotAct: "Je ne peux pas effectuer d'actions ni consulter vos systèmes ici : aucun modèle de langage n'est configuré pour cet assistant, il ne peut que citer la base de connaissances.",
    found: 'Voici ce que dit la base de connaissances :',
    from: (title) => `Extrait de « ${title} »`,
    nothing: "Je n'ai rien trouvé à ce sujet dans la base de connaissances, je ne peux donc pas y répondre. Essayez d'autres mots, ou demandez à une personne.",
  },
  de: {
    cannotAct: 'Ich kann hier keine Aktionen ausführen und nichts in Ihren Systemen nachsehen: Für diesen Assistenten ist kein Sprachmodell eingerichtet, er kann nur die Wissensdatenbank zitieren.',
    found: 'Das steht dazu in der Wissensdatenbank:',
    from: (title) => `Aus „${title}“`,
    nothing: 'Dazu habe ich in der Wissensdatenbank nichts gefunden und kann es daher nicht beantworten. Versuchen Sie andere Worte, oder fragen Sie eine Person.',
  },
  es: {
    cannotAct: 'No puedo realizar acciones ni consultar sus sistemas aquí: este asistente no tiene configurado un modelo de lenguaje, así que solo puede citar la base de conocimiento.',
    found: 'Esto es lo que dice la base de conocimiento:',
    from: (title) => `De «${title}»`,
    nothing: 'No encontré nada sobre esto en la base de conocimiento, así que no puedo responderlo desde ahí. Pruebe con otras palabras o pregunte a una persona.',
  },
};

const phrasesFor = (language: string): Phrases => PHRASES[language.toLowerCase().slice(0, 2)] ?? PHRASES.en;

interface Quote {
  passage: Passage;
  sentences: string[];
}

/** The quotes that answer `question` from `passages`; empty when none is relevant. */
export function extractQuotes(question: string, passages: readonly Passage[]): Quote[] {
  const asked = meaningfulTerms(question);
  if (asked.size === 0 || passages.length === 0) return [];
  const scanned = passages.map((passage) => {
    const sentences = sentencesOf(passage.text).map((text, index) => ({ text, index, terms: meaningfulTerms(text) }));
    const terms = new Set([...meaningfulTerms(passage.title), ...meaningfulTerms(passage.heading ?? ''), ...sentences.flatMap((sentence) => [...sentence.terms])]);
    return { passage, sentences, terms };
  });
  // A word few passages share says more about which one answers than a word all of them have.
  const weight = new Map<string, number>();
  for (const term of asked) {
    const having = scanned.filter((entry) => entry.terms.has(term)).length;
    if (having > 0) weight.set(term, Math.log(1 + scanned.length / having));
  }
  const quotes: Quote[] = [];
  for (const entry of scanned) {
    if (quotes.length >= MAX_QUOTED_PASSAGES) break;
    if (![...asked].some((term) => entry.terms.has(term))) continue;
    const scored = entry.sentences
      .map((sentence) => ({ ...sentence, score: [...asked].reduce((sum, term) => sum + (sentence.terms.has(term) ? (weight.get(term) ?? 0) : 0), 0) }))
      .filter((sentence) => sentence.score > 0)
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, MAX_SENTENCES_PER_PASSAGE)
      .sort((a, b) => a.index - b.index);
    // Relevant by its title or heading alone: its opening is what it says about that.
    const chosen = scored.length > 0 ? scored : entry.sentences.slice(0, 1);
    if (chosen.length === 0) continue;
    quotes.push({ passage: entry.passage, sentences: chosen.map((sentence) => quotable(sentence.text)) });
  }
  return quotes;
}

export class ExtractiveAssistantEngine implements AssistantEngine {
  readonly model = EXTRACTIVE_MODEL;

  async *answer(request: AssistantRequest): AsyncIterable<AssistantChunk> {
    const phrases = phrasesFor(request.assistant.language);
    const quotes = extractQuotes(request.question, request.passages);
    // It never calls a tool: asked to act, it says so before anything else.
    const preface = asksToAct(request.question, request.tools ?? []) ? `${phrases.cannotAct}\n\n` : '';
    if (quotes.length === 0) {
      yield { kind: 'delta', text: `${preface}${phrases.nothing}` };
      yield { kind: 'done', model: this.model, cited: [], answered_from_knowledge: false, usage: null };
      return;
    }
    yield { kind: 'delta', text: `${preface}${phrases.found}` };
    for (const quote of quotes) {
      if (request.signal?.aborted) throw new AssistantEngineError('cancelled', 'the answer was cancelled');
      const title = quote.passage.heading && quote.passage.heading !== quote.passage.title ? `${quote.passage.title}, ${quote.passage.heading}` : quote.passage.title;
      yield { kind: 'delta', text: `\n\n${phrases.from(title)} [${quote.passage.id}]:\n${quote.sentences.map((sentence) => `> ${sentence}`).join('\n')}` };
    }
    yield { kind: 'done', model: this.model, cited: quotes.map((quote) => quote.passage.id), answered_from_knowledge: true, usage: null };
  }
}
