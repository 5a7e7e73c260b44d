// The port for speech: what a visitor says to the widget becomes text (speech to text), and an
// answer becomes audio (text to speech). An OpenAI-compatible audio server implements it
// (infrastructure/speech/openai-speech.ts) when the operator configures one (SPEECH_*);
// without one the platform has no speech, and the speech routes say so (503).

/** Audio as it travels: the bytes and their media type (`audio/webm`, `audio/mpeg`, ...). */
export interface Audio {
  bytes: Buffer;
  content_type: string;
}

/** The speech server gave no usable answer: unreachable, too slow, or it refused. */
export class SpeechProviderError extends Error {
  constructor(
    readonly reason: 'unreachable' | 'timeout' | 'refused',
    message: string,
  ) {
    super(message);
    this.name = 'SpeechProviderError';
  }
}

/** The deployment has no speech server (SPEECH_BASE_URL unset): nothing can be transcribed or spoken. */
export class SpeechNotConfiguredError extends Error {
  constructor() {
    super('speech is not configured on this platform: its operator sets SPEECH_BASE_URL (an OpenAI-compatible audio server) and, where needed, SPEECH_API_KEY, SPEECH_STT_MODEL and SPEECH_TTS_MODEL');
    this.name = 'SpeechNotConfiguredError';
  }
}

export interface Speech {
  /** The text spoken in the audio (`mime` as sniffed from the bytes); rejects with SpeechProviderError. */
  transcribe(audio: Buffer, mime: string): Promise<string>;
  /** `text` read aloud in `voice`; rejects with SpeechProviderError. */
  synthesize(text: string, voice: string): Promise<Audio>;
}
