// Speech over HTTP against the real server: `POST /api/v1/widget/stt` (multipart audio ->
// {text}) and `POST /api/v1/widget/tts` ({text, voice?} -> audio), with a member's user token or
// a widget token, through a local server that speaks OpenAI's audio wire format
// (SPEECH_BASE_URL). Without a speech server both are 503 `configuration_error`.

import { expect } from 'chai';
import { type Account, registerOwner } from '../support/identity';
import { multipartForm, pdfOf } from '../support/documents';
import { type TestServer, startTestServer } from '../support/server';
import { wavOf } from '../support/audio';
import { OpenAiAudioServer, SPOKEN_MP3 } from '../support/openai-audio-server';
import { type TenantWidget, asVisitor, configureWidget, newVisitorId, rotateWidgetToken, widgetOf } from '../support/widget-visitors';

const MAX_AUDIO_BYTES = 8192;
const PER_MINUTE = 3;

/** Raw bytes of a fetch answer (the test server's helper reads text). */
async function bytesOf(server: TestServer, path: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('speech (POST /api/v1/widget/stt, /api/v1/widget/tts)', () => {
  describe('with a speech server', () => {
    let server: TestServer;
    let audio: OpenAiAudioServer;
    let owner: Account;
    let widget: TenantWidget;
    const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
    const recording = (content: Buffer, filename = 'voice.wav') => multipartForm([{ name: 'file', filename, content, type: 'audio/wav' }]);
    const stt = (headers: Record<string, string>, content: Buffer = wavOf(0.1), filename?: string) => {
      const form = recording(content, filename);
      return server.request('POST', '/api/v1/widget/stt', { headers: { ...headers, ...form.headers }, rawBody: form.rawBody });
    };
    const tts = (headers: Record<string, string>, body: unknown) => server.request('POST', '/api/v1/widget/tts', { headers, body });

    before(async () => {
      audio = await OpenAiAudioServer.start();
      server = await startTestServer({
        SCRYPT_LOG_N: '12',
        SPEECH_BASE_URL: audio.baseUrl,
        SPEECH_API_KEY: 'sk-platform-speech',
        SPEECH_STT_MODEL: 'gpt-4o-mini-transcribe',
        SPEECH_TTS_MODEL: 'gpt-4o-mini-tts',
        SPEECH_TTS_VOICE: 'coral',
        SPEECH_MAX_AUDIO_BYTES: String(MAX_AUDIO_BYTES),
        SPEECH_REQUESTS_PER_MINUTE: String(PER_MINUTE),
      });
      owner = await registerOwner(server, 'speech-org');
      widget = await widgetOf(server, owner);
    });
    after(async () => {
      await server.close();
      await audio.close();
    });

    it('transcribes a member’s recording: the audio, told by its bytes, goes to the speech server with the configured model and key', async () => {
      const recorded = wavOf(0.1);
      audio.script({ text: '  Where is my parcel?  ' });
      const response = await stt(as(owner), recorded, 'recording.bin');
      expect(response.status, response.text).to.equal(200);
      expect(response.json).to.deep.equal({ text: 'Where is my parcel?' });
      expect(await response.events()).to.deep.equal([]);
      const received = audio.requests.at(-1)!;
      expect(received.path).to.equal('/v1/audio/transcriptions');
      expect(received.headers.authorization).to.equal('Bearer sk-platform-speech');
      expect(received.fields.model).to.equal('gpt-4o-mini-transcribe');
      expect(received.file).to.deep.include({ name: 'audio.wav', type: 'audio/wav' });
      expect(received.file!.bytes.equals(recorded)).to.equal(true);
    });

    it('speaks a text for a member: MP3 bytes as audio/mpeg, in the configured voice unless one is named', async () => {
      const spoken = await bytesOf(server, '/api/v1/widget/tts', as(owner), { text: 'Your parcel left today.' });
      expect(spoken.status).to.equal(200);
      expect(spoken.type).to.equal('audio/mpeg');
      expect(spoken.bytes.equals(SPOKEN_MP3)).to.equal(true);
      expect(audio.requests.at(-1)!.json).to.deep.equal({ model: 'gpt-4o-mini-tts', input: 'Your parcel left today.', voice: 'coral', response_format: 'mp3' });
    });

    it('answers 415 for what is not audio, 413 past SPEECH_MAX_AUDIO_BYTES and 400 without the file, sending nothing on', async () => {
      const before = audio.requests.length;
      const pdf = await stt(as(owner), pdfOf(['not audio']), 'voice.wav');
      expect([pdf.status, pdf.json.code]).to.deep.equal([415, 'unsupported_audio_type']);
      const large = await stt(as(owner), wavOf(1));
      expect([large.status, large.json.code]).to.deep.equal([413, 'audio_too_large']);
      const form = multipartForm([{ name: 'audio', filename: 'voice.wav', content: wavOf(0.05) }]);
      const misnamed = await server.request('POST', '/api/v1/widget/stt', { headers: { ...as(owner), ...form.headers }, rawBody: form.rawBody });
      expect([misnamed.status, misnamed.json.code, misnamed.json.field]).to.deep.equal([400, 'invalid_request', 'file']);
      const json = await server.request('POST', '/api/v1/widget/stt', { headers: as(owner), body: { file: 'abc' } });
      expect(json.status).to.equal(415);
      expect(audio.requests.length).to.equal(before);
    });

    it('answers 400 naming a bad text or voice', async () => {
      for (const [body, field] of [
        [{ text: '' }, 'text'],
        [{ text: 't'.repeat(4097) }, 'text'],
        [{}, 'text'],
        [{ text: 'Hi', voice: 'no voice!' }, 'voice'],
        [{ text: 'Hi', voice: 7 }, 'voice'],
      ] as const) {
        const response = await tts(as(owner), body);
        expect([response.status, response.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
      }
    });

    it('answers 502 speech_unavailable when the speech server fails', async () => {
      audio.script({ status: 500 });
      const failed = await stt(as(owner));
      expect([failed.status, failed.json.code]).to.deep.equal([502, 'speech_unavailable']);
      expect(failed.text).to.not.include('sk-platform-speech');
    });

    it('takes a widget token with the visitor header once the organization turned the widget’s voice on', async () => {
      const visitorId = newVisitorId();
      const off = await tts(asVisitor(widget.token, visitorId), { text: 'Hello' });
      expect([off.status, off.json.code, off.json.setting]).to.deep.equal([403, 'widget_feature_disabled', 'voice']);
      await configureWidget(server, owner.tenant_id, { voice: true, allowed_origins: ['https://shop.example.com'] });
      audio.script({ text: 'Do you ship to Norway?' });
      const heard = await stt(asVisitor(widget.token, visitorId, { origin: 'https://shop.example.com' }));
      expect([heard.status, heard.json.text]).to.deep.equal([200, 'Do you ship to Norway?']);
      expect(heard.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
      const spoken = await bytesOf(server, '/api/v1/widget/tts', asVisitor(widget.token, visitorId), { text: 'We do.', voice: 'alloy' });
      expect([spoken.status, spoken.type]).to.deep.equal([200, 'audio/mpeg']);

      const foreign = await tts(asVisitor(widget.token, visitorId, { origin: 'https://evil.example.net' }), { text: 'Hello' });
      expect([foreign.status, foreign.json.code]).to.deep.equal([403, 'origin_not_allowed']);
      const anonymous = await tts({ authorization: `Bearer ${widget.token}` }, { text: 'Hello' });
      expect([anonymous.status, anonymous.json.code]).to.deep.equal([400, 'invalid_visitor']);
    });

    it('answers 401 without a token, for an unknown or rotated widget token and an unknown user token', async () => {
      expect((await tts({}, { text: 'Hello' })).status).to.equal(401);
      expect((await stt({ 'x-widget-visitor': newVisitorId() })).status).to.equal(401);
      expect((await tts(asVisitor('wt_unknown', newVisitorId()), { text: 'Hello' })).json.code).to.equal('invalid_widget_token');
      expect((await tts({ authorization: 'Bearer v4.public.not-a-token' }, { text: 'Hello' })).status).to.equal(401);
      const org = await registerOwner(server, 'speech-rotating');
      const old = await widgetOf(server, org);
      await configureWidget(server, org.tenant_id, { voice: true });
      await rotateWidgetToken(server, org);
      const rotated = await stt(asVisitor(old.token, newVisitorId()));
      expect([rotated.status, rotated.json.code]).to.deep.equal([401, 'invalid_widget_token']);
    });

    it(`answers 429 past ${PER_MINUTE} speech requests of one visitor a minute, with Retry-After; another visitor is not held up`, async () => {
      const visitorId = newVisitorId();
      for (let n = 0; n < PER_MINUTE; n += 1) expect((await tts(asVisitor(widget.token, visitorId), { text: `Line ${n}` })).status).to.equal(200);
      const refused = await stt(asVisitor(widget.token, visitorId));
      expect([refused.status, refused.json.code]).to.deep.equal([429, 'rate_limited']);
      expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
      expect((await tts(asVisitor(widget.token, newVisitorId()), { text: 'Hello' })).status).to.equal(200);
    });
  });

  describe('without a speech server', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12' });
    });
    after(() => server.close());

    it('answers 503 configuration_error with what the operator sets, to members and widgets alike, before reading an upload', async () => {
      const owner = await registerOwner(server, 'speechless-org');
      const widget = await widgetOf(server, owner);
      await configureWidget(server, owner.tenant_id, { voice: true });
      const form = multipartForm([{ name: 'file', filename: 'voice.wav', content: wavOf(0.05) }]);
      for (const headers of [{ authorization: `Bearer ${owner.token}` }, asVisitor(widget.token, newVisitorId())]) {
        const stt = await server.request('POST', '/api/v1/widget/stt', { headers: { ...headers, ...form.headers }, rawBody: form.rawBody });
        expect([stt.status, stt.json.code]).to.deep.equal([503, 'configuration_error']);
        expect(stt.json.message).to.include('SPEECH_BASE_URL');
        const tts = await server.request('POST', '/api/v1/widget/tts', { headers, body: { text: 'Hello' } });
        expect([tts.status, tts.json.code]).to.deep.equal([503, 'configuration_error']);
      }
      expect((await server.request('POST', '/api/v1/widget/tts', { body: { text: 'Hello' } })).status).to.equal(401);
    });
  });
});
