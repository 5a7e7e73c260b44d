// A local server standing where a connector would be, answering what a test scripts: a JSON
// answer, garbage, nothing at all (it hangs), a closed connection, an answer cut short. It
// records every request exactly as it arrived (path, headers, raw body), so a test can check
// what the platform sent and how many times.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedCall {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The body parsed as JSON (undefined when it is not). */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** How the server answers one request. */
export type Script = (call: ReceivedCall, response: http.ServerResponse) => void;

export interface ScriptedConnector {
  /** `http://127.0.0.1:<port>`, without a path. */
  url: string;
  port: number;
  calls: ReceivedCall[];
  /** The scripts of the next requests, in order; the last one keeps answering once the others are used. */
  answerWith(...scripts: Script[]): void;
  close(): Promise<void>;
}

/** A JSON answer with a status. */
export const json =
  (status: number, body: unknown): Script =>
  (_call, response) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
  };

/** Any bytes with a status and content type. */
export const raw =
  (status: number, text: string, contentType = 'text/html'): Script =>
  (_call, response) => {
    response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    response.end(text);
  };

/** Never answers (until the server closes). */
export const hang: Script = () => undefined;

/** Closes the connection without a word. */
export const closeConnection: Script = (_call, response) => {
  response.socket?.destroy();
};

/** Declares a body of 100 bytes, sends 10 and closes the connection. */
export const cutShort: Script = (_call, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 });
  response.write('{"type":"p');
  setImmediate(() => response.socket?.destroy());
};

/** A pong as the SDK answers it. */
export const pong: Script = json(200, { type: 'pong', protocol_version: '1', sdk_version: '1.0.0' });

export async function startScriptedConnector(...initial: Script[]): Promise<ScriptedConnector> {
  const calls: ReceivedCall[] = [];
  let scripts: Script[] = initial.length > 0 ? initial : [pong];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        parsed = undefined;
      }
      const call: ReceivedCall = { path: request.url ?? '', headers, body, json: parsed };
      calls.push(call);
      const script = scripts.length > 1 ? (scripts.shift() as Script) : scripts[0];
      script(call, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    calls,
    answerWith(...next) {
      scripts = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on: a server is opened there and closed again. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
