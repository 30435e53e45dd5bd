import { connect } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

let upstream: Upstream | undefined;
let facade: Facade | undefined;
afterEach(async () => {
  await upstream?.close();
  await facade?.close().catch(() => undefined);
  upstream = facade = undefined;
});

const raw = (id: string) => {
  const body = JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` });
  return (
    `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

it('answers both of two pipelined requests received before SIGTERM', async () => {
  upstream = await startUpstream(faults.slowHeaders(300));
  facade = await startFacade(upstream.url, { SHUTDOWN_GRACE_MS: '5000' });
  const socket = connect(facade.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(raw('A') + raw('B'));
  // Both requests reached the façade (B's upstream call went out too: Node emits pipelined requests at once).
  await expect.poll(() => upstream!.requests.length).toBe(2);
  const shutdown = facade.close();
  facade = undefined;
  await ended;
  await shutdown;
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((match) => match[1]);
  expect({ statuses, hasB: received.includes('classifications/B/groups') }).toEqual({
    statuses: ['200', '200'],
    hasB: true,
  });
});

it('answers a request pipelined behind one in flight when SIGTERM came between them', async () => {
  upstream = await startUpstream(faults.slowHeaders(400));
  facade = await startFacade(upstream.url, { SHUTDOWN_GRACE_MS: '5000' });
  const socket = connect(facade.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(raw('A'));
  await expect.poll(() => upstream!.requests.length).toBe(1);
  const shutdown = facade.close();
  facade = undefined;
  socket.write(raw('B'));
  await ended;
  await shutdown;
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d+)/g)].map((match) => match[1]);
  expect({ statuses, hasB: received.includes('classifications/B/groups') }).toEqual({
    statuses: ['200', '200'],
    hasB: true,
  });
  expect(received.match(/connection: close/gi)).toHaveLength(1);
});
