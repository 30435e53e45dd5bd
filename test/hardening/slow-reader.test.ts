import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { unreadPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasesOf, largePage } from '../helpers/upstream.ts';

const servers = closedAfterEach();

/** A client that stopped reading, its request the query alone. */
const stopReading = (port: number, query: string) => unreadPost(port, JSON.stringify({ query }));

// A client that stops reading its answer once held it in the server's memory for as long as it kept the
// connection open: its bytes stopped counting toward PIM_MAX_INFLIGHT_BYTES as soon as the answer was
// built, and nothing cut the connection. 40 such sockets took the process past 1.9 GB.
it('counts an unread answer toward the process cap until a send stalled past HTTP_SEND_TIMEOUT_MS ends it', async () => {
  const { facade } = await servers.start(largePage, {
    PIM_MAX_INFLIGHT_BYTES: String(24 * 2 ** 20),
    PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: String(24 * 2 ** 20),
    HTTP_SEND_TIMEOUT_MS: '2000',
  });
  // 20 MB out of one page read: more than the loopback socket's buffers take, so most waits in the server.
  const sent = performance.now();
  const slow = await stopReading(facade.port, `{ ${aliasesOf('SLOW', 10)} }`);
  // 8 MB more would pass the 24 MiB the process may hold while the unread 20 MB still counts. No polling for it:
  // a probe of that size, sent before the 20 MB is built, could take the room the 20 MB needs.
  await sleep(500);
  const other = async () => (await facade.post(`{ ${aliasesOf('OTHER', 4)} }`)).body.errors?.[0]?.message;
  expect(await other()).toBe('The server holds too much catalog data right now; retry later');

  // The stalled send is cut, and its bytes with it: within the timeout and a check or two, the same ask fits,
  // and not before the send has stalled for HTTP_SEND_TIMEOUT_MS.
  await expect.poll(other, { interval: 250, timeout: 6_000 }).toBeUndefined();
  expect(performance.now() - sent).toBeGreaterThanOrEqual(2_000);
  slow.resume();
  await new Promise((resolve) => slow.once('close', resolve));
});

it('leaves a client that reads slowly but steadily alone', { timeout: 30_000 }, async () => {
  // The kernel takes a reader's bytes in bursts (about one a second here): the timeout is a few of them.
  const { facade } = await servers.start(largePage, { HTTP_SEND_TIMEOUT_MS: '3000' });
  const socket = await stopReading(facade.port, `{ ${aliasesOf('STEADY', 4)} }`);
  // A chunk, then a pause of 50 ms: about 1 MB a second.
  let head = '';
  let received = 0;
  const whole = new Promise<string>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (head.length < 1_000) head += chunk.toString('latin1', 0, 1_000);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      if (received >= head.indexOf('\r\n\r\n') + 4 + length) resolve('whole');
      socket.pause();
      setTimeout(() => socket.resume(), 50);
    });
    socket.once('close', () => resolve('cut'));
  });
  socket.resume();
  expect(await whole).toBe('whole');
  expect(received).toBeGreaterThan(8_000_000);
});
