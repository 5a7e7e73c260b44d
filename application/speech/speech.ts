// Speech for the widget and the console (spec 4.4, `POST /api/v1/widget/stt` and `/tts`):
// audio a visitor or a member recorded becomes text, and text becomes audio, through the
// speech port. Either caller is held to a rate per minute (429 `rate_limited`); a widget's
// visitor only when the tenant turned the widget's voice on. Nothing is recorded: the audio
// and the text pass through (the text becomes a chat message only when the widget sends it).
//
// Audio is told by its bytes (audio-types.ts): 415 `unsupported_audio_type` for anything else;
// 413 past SPEECH_MAX_AUDIO_BYTES. Text to speech takes 1 to MAX_SPEECH_TEXT_LENGTH characters
// (OpenAI's own limit) and a voice name of the server's (SPEECH_TTS_VOICE by default).

import { invalid, tooLarge, unsupportedType } from '../../domain/shared/errors';
import { checkText } from '../../domain/shared/text';
import { type Audio, type Speech, SpeechNotConfiguredError } from '../ports/speech';
import type { RateLimit, RateLimiter } from '../ports/rate-limiter';
import { RateLimitedError } from '../user/abuse-controls';
import { SUPPORTED_AUDIO_TYPES, sniffAudio } from './audio-types';

export const MAX_SPEECH_TEXT_LENGTH = 4096;
/** A voice name as speech servers spell them (`alloy`, `en_US-lessac-medium`). */
const VOICE = /^[A-Za-z0-9_.-]{1,64}$/;

export interface SpeechSettings {
  /** Largest audio accepted for transcription (SPEECH_MAX_AUDIO_BYTES). */
  maxAudioBytes: number;
  /** The voice when the request names none (SPEECH_TTS_VOICE). */
  defaultVoice: string;
  /** Requests per caller and minute (SPEECH_REQUESTS_PER_MINUTE). */
  perMinute: number;
}

export interface SpeechDependencies {
  /** Null: the deployment has no speech server. */
  speech: Speech | null;
  limiter: RateLimiter;
  speechSettings: SpeechSettings;
}

/** Who asks: a member with their user token, or a widget's visitor. */
export type SpeechCaller = { kind: 'user'; tenant_id: string; user_id: string } | { kind: 'visitor'; tenant_id: string; visitor_id: string };

/** The configured speech port, or SpeechNotConfiguredError (503 `configuration_error`). */
export function requireSpeech(deps: Pick<SpeechDependencies, 'speech'>): Speech {
  if (deps.speech === null) throw new SpeechNotConfiguredError();
  return deps.speech;
}

async function spend(deps: SpeechDependencies, caller: SpeechCaller): Promise<void> {
  const who = caller.kind === 'user' ? `user:${caller.user_id}` : `visitor:${caller.visitor_id}`;
  const limit: RateLimit = { limit: deps.speechSettings.perMinute, windowSeconds: 60 };
  const decision = await deps.limiter.consume(`speech:${caller.tenant_id}:${who}`, limit);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
}

/** The text spoken in `audio`: 413 too large, 415 not audio of a supported type, 429 over the rate. */
export async function transcribeSpeech(deps: SpeechDependencies, caller: SpeechCaller, audio: Buffer): Promise<{ text: string }> {
  const speech = requireSpeech(deps);
  if (audio.length > deps.speechSettings.maxAudioBytes) throw tooLarge('audio_too_large', `the audio may be at most ${deps.speechSettings.maxAudioBytes} bytes`);
  const type = sniffAudio(audio);
  if (type === null) throw unsupportedType('unsupported_audio_type', `file: expected audio as ${SUPPORTED_AUDIO_TYPES.join(', ')}`);
  await spend(deps, caller);
  return { text: (await speech.transcribe(audio, type.mime)).trim() };
}

/** `text` read aloud: 400 naming `text` or `voice`, 429 over the rate. */
export async function synthesizeSpeech(deps: SpeechDependencies, caller: SpeechCaller, input: { text: string; voice?: string | null }): Promise<Audio> {
  const speech = requireSpeech(deps);
  const text = checkText('text', input.text, { max: MAX_SPEECH_TEXT_LENGTH, multiline: true });
  if (text._tag === 'Left') throw text.left;
  const voice = input.voice ?? deps.speechSettings.defaultVoice;
  if (!VOICE.test(voice)) throw invalid('invalid_request', 'voice: expected a voice name of 1 to 64 letters, digits, _ . and -', 'voice');
  await spend(deps, caller);
  return speech.synthesize(text.right, voice);
}
