import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { faults } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';

const { start } = closedAfterEach();

const raw = (id: string) => {
  const body = JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` });
  return (
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

/**
 * One connection to a façade whose PIM answers after `delayMs`: `send(ids)` pipelines requests of those ids on it,
 * `shutdown()` sends SIGTERM's shutdown, and `answers()` waits for the connection to end and what came back on it.
 */
async function pipelining(delayMs: number) {
  const { upstream, facade } = await start(faults.slowHeaders(delayMs), { SHUTDOWN_GRACE_MS: '5000' });
  const socket = connect(facade.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  let shutdown: Promise<unknown> = Promise.resolve();
  return {
    upstream,
    send: (...ids: string[]) => void socket.write(ids.map(raw).join('')),
    shutdown: () => void (shutdown = facade.close()),
    async answers() {
      await ended;
      await shutdown;
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((match) => match[1]);
      return { statuses, hasB: received.includes('classifications/B/groups'), received };
    },
  };
}

// docs/operations.md, Shutdown: every request the façade has received is answered within SHUTDOWN_GRACE_MS. A client
// may send its next request on a connection before the answer to the one before (HTTP/1.1 pipelining): told
// `Connection: close` on the first answer, Node ended the connection after it and the one behind went unanswered.
it('answers both of two pipelined requests received before SIGTERM', async () => {
  const connection = await pipelining(300);
  connection.send('A', 'B');
  // Both requests reached the façade (B's upstream call went out too: Node emits pipelined requests at once).
  await expect.poll(() => connection.upstream.requests.length).toBe(2);
  connection.shutdown();
  const { statuses, hasB } = await connection.answers();
  expect({ statuses, hasB }).toEqual({ statuses: ['200', '200'], hasB: true });
});

it('answers a request pipelined behind one in flight when SIGTERM came between them', async () => {
  const connection = await pipelining(400);
  connection.send('A');
  await expect.poll(() => connection.upstream.requests.length).toBe(1);
  connection.shutdown();
  connection.send('B');
  const { statuses, hasB, received } = await connection.answers();
  expect({ statuses, hasB }).toEqual({ statuses: ['200', '200'], hasB: true });
  expect(received.match(/connection: close/gi)).toHaveLength(1);
});
