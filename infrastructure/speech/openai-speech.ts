// Speech on an OpenAI-compatible audio server, through the official `openai` package: OpenAI
// itself, or any server that speaks its audio wire format (LocalAI, Speaches, vLLM's
// transcription endpoint, ...). Used when SPEECH_BASE_URL is set.
//
// - Speech to text: `POST <base>/audio/transcriptions`, multipart with the audio as `file`
//   (named `audio.<extension>` of the sniffed type, which servers read the format from) and
//   `model` (SPEECH_STT_MODEL); the JSON answer's `text`.
// - Text to speech: `POST <base>/audio/speech`, JSON `{model (SPEECH_TTS_MODEL), input, voice,
//   response_format: "mp3"}`; the answer's bytes, as audio/mpeg.
// - Failures become SpeechProviderError: `timeout` (no answer within SPEECH_TIMEOUT_MS),
//   `unreachable`, `refused` (the server answered an error status: its status is in the message).
//   Not retried: the visitor is waiting, and says it again.

import OpenAI, { toFile } from 'openai';
import { openAiCompatibleClient } from '../llm/openai-client';
import { type Audio, type Speech, SpeechProviderError } from '../../application/ports/speech';

export interface OpenAiSpeechOptions {
  /** SPEECH_BASE_URL, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** SPEECH_API_KEY; null for a server that needs none (no Authorization header is sent then). */
  apiKey: string | null;
  /** SPEECH_STT_MODEL. */
  sttModel: string;
  /** SPEECH_TTS_MODEL. */
  ttsModel: string;
  /** SPEECH_TIMEOUT_MS. */
  timeoutMs: number;
}

/** The file name extension a transcription server reads the format from. */
const EXTENSIONS: Record<string, string> = {
  'audio/webm': 'webm',
  'audio/mp4': 'm4a',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/flac': 'flac',
};

export class OpenAiSpeech implements Speech {
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiSpeechOptions) {
    this.client = openAiCompatibleClient({ baseUrl: options.baseUrl, apiKey: options.apiKey ?? null, timeoutMs: options.timeoutMs, maxRetries: 0 });
  }

  async transcribe(audio: Buffer, mime: string): Promise<string> {
    try {
      const file = await toFile(audio, `audio.${EXTENSIONS[mime] ?? 'bin'}`, { type: mime });
      const transcription = await this.client.audio.transcriptions.create({ file, model: this.options.sttModel, response_format: 'json' });
      if (typeof transcription?.text !== 'string') throw new SpeechProviderError('refused', 'the speech server answered without a text');
      return transcription.text;
    } catch (error) {
      throw this.failure(error);
    }
  }

  async synthesize(text: string, voice: string): Promise<Audio> {
    try {
      const response = await this.client.audio.speech.create({ model: this.options.ttsModel, input: text, voice, response_format: 'mp3' });
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length === 0) throw new SpeechProviderError('refused', 'the speech server answered without audio');
      // MP3 was asked for: whatever a server calls it (audio/mp3, application/octet-stream), it is audio/mpeg.
      return { bytes, content_type: 'audio/mpeg' };
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** What went wrong, in the port's terms; the server's own message is kept short and never includes the key. */
  private failure(error: unknown): SpeechProviderError {
    if (error instanceof SpeechProviderError) return error;
    if (error instanceof OpenAI.APIConnectionTimeoutError) return new SpeechProviderError('timeout', `the speech server did not answer within ${this.options.timeoutMs} ms`);
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      return new SpeechProviderError('refused', `the speech server answered ${error.status}: ${String(error.message).slice(0, 300)}`);
    }
    if (error instanceof OpenAI.APIConnectionError) return new SpeechProviderError('unreachable', 'the speech server could not be reached');
    return new SpeechProviderError('refused', `the speech server's answer could not be read: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
  }
}
