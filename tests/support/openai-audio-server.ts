// A local server that speaks OpenAI's audio wire format: `POST .../audio/transcriptions` takes
// multipart form data (`file`, `model`, `response_format`) and answers JSON `{"text"}`;
// `POST .../audio/speech` takes JSON `{model, input, voice, response_format}` and answers the
// audio's bytes (an MP3 here: an ID3 tag and MPEG frame headers). Each request is recorded as
// parsed (the multipart through the platform's own Request parser); a test may script the next
// answers (a status with OpenAI's error body, or a hold that outlasts a client's timeout).

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedAudioRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Transcriptions: the form's text fields. */
  fields: Record<string, string>;
  /** Transcriptions: the uploaded file. */
  file: { name: string; type: string; bytes: Buffer } | null;
  /** Speech: the JSON body. */
  json: Record<string, unknown> | null;
}

export interface ScriptedAudioAnswer {
  /** Answer this status with OpenAI's error body. */
  status?: number;
  /** Wait this long before answering. */
  delayMs?: number;
  /** The transcription's text. */
  text?: string;
}

/** A short MP3: an ID3v2 tag and two MPEG-1 Layer III frame headers. */
export const SPOKEN_MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(413)]);

export class OpenAiAudioServer {
  readonly requests: ReceivedAudioRequest[] = [];
  private readonly scripts: ScriptedAudioAnswer[] = [];

  private constructor(
    private readonly server: http.Server,
    /** The base URL, as SPEECH_BASE_URL takes it. */
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<OpenAiAudioServer> {
    let instance: OpenAiAudioServer | null = null;
    const server = http.createServer((request, response) => {
      void instance!.answer(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance = new OpenAiAudioServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    return instance;
  }

  /** Scripts the next answers, in order. */
  script(...answers: ScriptedAudioAnswer[]): void {
    this.scripts.push(...answers);
  }

  private async answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const path = request.url ?? '';
    const received: ReceivedAudioRequest = { path, headers: request.headers, fields: {}, file: null, json: null };
    if (path.endsWith('/audio/transcriptions')) {
      const form = await new Request('http://audio.local/', { method: 'POST', headers: { 'content-type': request.headers['content-type'] ?? '' }, body }).formData();
      for (const [name, value] of form.entries()) {
        if (typeof value === 'string') received.fields[name] = value;
        else received.file = { name: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
      }
    } else if (path.endsWith('/audio/speech')) {
      received.json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    }
    this.requests.push(received);
    const script = this.scripts.shift() ?? {};
    if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
    if (response.destroyed) return;
    if (script.status) {
      response.writeHead(script.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
      return;
    }
    if (path.endsWith('/audio/transcriptions')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ text: script.text ?? 'Where is my parcel?' }));
      return;
    }
    if (path.endsWith('/audio/speech')) {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      response.end(SPOKEN_MP3);
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { message: 'not found' } }));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
