import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// The head of one raw exchange: what a proxy in front of the façade reads.
const exchange = (port: number, head: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(head));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (text += data));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });

// Yoga answers a method it does not serve (405) through the result processor the Accept picks: multipart/mixed's
// sets `Transfer-Encoding: chunked` (and the event stream's `Content-Encoding: none`). The refusal plugin rewrote the
// answer as a JSON body with a length of its own, keeping those: a head with both Content-Length and
// Transfer-Encoding, which undici (Node's fetch) refuses outright and RFC 9112 §6.1 calls a request-smuggling hazard.
it.each(['multipart/mixed', 'text/event-stream', 'multipart/mixed, application/json'])(
  'a 405 to a client accepting %s is one well-framed JSON refusal',
  async (accept) => {
    const { facade } = await servers.start(echo);
    const answer = await fetch(facade.url, { method: 'PUT', headers: { accept } }).then(
      async (response) => ({ status: response.status, body: await response.json() }),
      (error: unknown) => ({ status: 0, body: String((error as Error).cause ?? error) }),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(405);
    expect(answer.body.errors[0].extensions.code).toBe('METHOD_NOT_ALLOWED');
    // HEAD is served as GET (test/http/head.test.ts).
    for (const method of ['PUT', 'DELETE']) {
      const raw = await exchange(
        facade.port,
        `${method} /graphql HTTP/1.1\r\nHost: x\r\nAccept: ${accept}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      const head = raw.split('\r\n\r\n')[0]!.toLowerCase();
      const framing = ['content-length', 'transfer-encoding'].filter((name) => head.includes(`\r\n${name}:`));
      expect(framing, `${method} ${accept}: ${head}`).toHaveLength(1);
      expect(head, `${method} ${accept}`).not.toMatch(/\r\ncontent-encoding:/);
    }
  },
);

// The same for Yoga's 413 of a batch past its 10 operations (GRAPHQL_BATCHING), which the refusal plugin rewrites too.
it('a 413 batch refusal to a multipart client is one well-framed JSON refusal', async () => {
  const { facade } = await servers.start(echo, { GRAPHQL_BATCHING: 'true' });
  const batch = JSON.stringify(Array.from({ length: 11 }, () => ({ query: '{ __typename }' })));
  const raw = await exchange(
    facade.port,
    `POST /graphql HTTP/1.1\r\nHost: x\r\nAccept: multipart/mixed\r\nContent-Type: application/json\r\nContent-Length: ${batch.length}\r\nConnection: close\r\n\r\n${batch}`,
  );
  const head = raw.split('\r\n\r\n')[0]!.toLowerCase();
  expect(head).toMatch(/^http\/1\.1 413/);
  const framing = ['content-length', 'transfer-encoding'].filter((name) => head.includes(`\r\n${name}:`));
  expect(framing, head).toHaveLength(1);
});
