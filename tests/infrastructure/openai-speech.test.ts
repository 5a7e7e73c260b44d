// The OpenAI-compatible speech adapter against a local server speaking OpenAI's audio wire
// format (tests/support/openai-audio-server.ts): what it sends, what it makes of the answers,
// and how failures become the port's SpeechProviderError.

import { expect } from 'chai';
import { SpeechProviderError } from '../../application/ports/speech';
import { OpenAiSpeech } from '../../infrastructure/speech/openai-speech';
import { wavOf } from '../support/audio';
import { OpenAiAudioServer, SPOKEN_MP3 } from '../support/openai-audio-server';
import { deadAddress } from '../support/webhook-receiver';

describe('OpenAI-compatible speech (infrastructure/speech/openai-speech.ts)', () => {
  let server: OpenAiAudioServer;
  const speechOn = (overrides: Partial<ConstructorParameters<typeof OpenAiSpeech>[0]> = {}) =>
    new OpenAiSpeech({ baseUrl: server.baseUrl, apiKey: 'sk-speech-test', sttModel: 'whisper-1', ttsModel: 'tts-1', timeoutMs: 5000, ...overrides });

  before(async () => {
    server = await OpenAiAudioServer.start();
  });
  after(() => server.close());

  async function failureOf(work: Promise<unknown>): Promise<SpeechProviderError> {
    try {
      await work;
    } catch (error) {
      expect(error).to.be.instanceOf(SpeechProviderError);
      return error as SpeechProviderError;
    }
    throw new Error('expected a SpeechProviderError');
  }

  it('transcribes: multipart with the audio as `file` named by its type, the model, the key; answers the text', async () => {
    const audio = wavOf(0.2);
    server.script({ text: 'Hello, is anyone there?' });
    expect(await speechOn().transcribe(audio, 'audio/wav')).to.equal('Hello, is anyone there?');
    const received = server.requests.at(-1)!;
    expect(received.path).to.equal('/v1/audio/transcriptions');
    expect(received.headers.authorization).to.equal('Bearer sk-speech-test');
    expect(received.fields).to.include({ model: 'whisper-1', response_format: 'json' });
    expect(received.file).to.deep.include({ name: 'audio.wav', type: 'audio/wav' });
    expect(received.file!.bytes.equals(audio)).to.equal(true);
  });

  it('speaks: JSON with the model, the text and the voice, asking for MP3; answers the bytes as audio/mpeg', async () => {
    const audio = await speechOn({ ttsModel: 'gpt-4o-mini-tts' }).synthesize('Your parcel left today.', 'nova');
    expect(audio.content_type).to.equal('audio/mpeg');
    expect(audio.bytes.equals(SPOKEN_MP3)).to.equal(true);
    const received = server.requests.at(-1)!;
    expect(received.path).to.equal('/v1/audio/speech');
    expect(received.json).to.deep.equal({ model: 'gpt-4o-mini-tts', input: 'Your parcel left today.', voice: 'nova', response_format: 'mp3' });
  });

  it('sends no Authorization header without a key', async () => {
    await speechOn({ apiKey: null }).synthesize('Hi', 'alloy');
    expect(server.requests.at(-1)!.headers.authorization).to.equal(undefined);
  });

  it('turns a refusal, no answer in time and an unreachable server into SpeechProviderError, the key never in the message', async () => {
    server.script({ status: 401 });
    const refused = await failureOf(speechOn().transcribe(wavOf(0.05), 'audio/wav'));
    expect(refused.reason).to.equal('refused');
    expect(refused.message).to.match(/^the speech server answered 401/);
    expect(refused.message).to.not.include('sk-speech-test');
    server.script({ delayMs: 1000 });
    expect((await failureOf(speechOn({ timeoutMs: 200 }).synthesize('Hi', 'alloy'))).reason).to.equal('timeout');
    expect((await failureOf(new OpenAiSpeech({ baseUrl: `${await deadAddress()}/v1`, apiKey: null, sttModel: 'whisper-1', ttsModel: 'tts-1', timeoutMs: 2000 }).synthesize('Hi', 'alloy'))).reason).to.equal('unreachable');
  });
});
