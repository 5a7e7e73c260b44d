// The platform's HTTP server (`platform.httpServer()`) is Node's own: `end()` finishes a
// response when it is called. Every client gets its own answer, in order, and a client that
// leaves early does not disturb the others.

import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { type TestServer, startTestServer } from '../support/server';

describe('HTTP server', () => {
  let server: TestServer;
  let port: number;

  before(async () => {
    server = await startTestServer();
    port = Number(new URL(server.url).port);
  });
  after(() => server.close());

  const rawExchange = (wire: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(wire));
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
    });

  it('finishes a response at end(): writableEnded is true, and a status set afterwards is not sent', async () => {
    // A second server of the same platform, watched from a listener that runs before Koa's.
    const watched = await server.platform.httpServer();
    const endedAtEnd: boolean[] = [];
    watched.prependListener('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
      const end = response.end.bind(response) as (...args: unknown[]) => http.ServerResponse;
      response.end = ((...args: unknown[]) => {
        const result = end(...args);
        endedAtEnd.push(response.writableEnded);
        response.statusCode = 599;
        return result;
      }) as typeof response.end;
    });
    await new Promise<void>((resolve) => watched.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(watched.address() as AddressInfo).port}/health`);
      expect(response.status).to.equal(200);
      expect(await response.json()).to.have.property('status');
      expect(endedAtEnd).to.deep.equal([true]);
    } finally {
      watched.closeAllConnections();
      await new Promise<void>((resolve) => watched.close(() => resolve()));
    }
  });

  it('gives each of many concurrent requests on kept-alive connections its own answer', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    try {
      const ids = Array.from({ length: 60 }, (_, index) => `concurrent-request-${index}`);
      const echoed = await Promise.all(
        ids.map(
          (id) =>
            new Promise<string | undefined>((resolve, reject) => {
              http
                .get({ host: '127.0.0.1', port, path: '/health', agent, headers: { 'x-request-id': id } }, (response) => {
                  response.resume();
                  response.on('end', () => resolve(response.headers['x-request-id'] as string | undefined));
                })
                .on('error', reject);
            }),
        ),
      );
      expect(echoed).to.deep.equal(ids);
    } finally {
      agent.destroy();
    }
  });

  it('answers pipelined requests on one connection in order', async () => {
    // No half-close: the last request asks the server to close the connection after it.
    const text = await rawExchange(
      'GET /health HTTP/1.1\r\nhost: x\r\n\r\nGET /nope HTTP/1.1\r\nhost: x\r\n\r\nGET /health HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n',
    );
    const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1]);
    expect(statuses).to.deep.equal(['200', '404', '200']);
  });

  it('keeps serving when clients leave before their answers are sent', async () => {
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<void>((resolve) => {
            const socket = net.connect(port, '127.0.0.1', () => {
              socket.write('GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
              socket.destroy();
              resolve();
            });
            socket.on('error', () => resolve());
          }),
      ),
    );
    const response = await server.request('GET', '/health');
    expect(response.status).to.equal(200);
  });
});
