import { connect } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { aliasesOf, largePage } from '../helpers/upstream.ts';
import { captureLogs } from '../helpers/logs.ts';

// docs/operations.md, Monitoring: `graphql_client_disconnects_total` counts "requests whose client went away before
// the whole answer was sent, a stream's last part included". An answer that is not streamed but large (20 MB here:
// more than the loopback socket's buffers take) is mostly still in the server when its client leaves.
const servers = closedAfterEach();

const disconnects = async (origin: string) =>
  Number(/^graphql_client_disconnects_total (\d+)$/m.exec(await (await fetch(`${origin}/metrics`)).text())?.[1]);

it('counts a client that leaves in the middle of a large (not streamed) answer as a disconnect', async () => {
  const { logger, lines } = captureLogs('info');
  const { facade } = await servers.start(largePage, {}, { logger });
  expect(await disconnects(facade.origin)).toBe(0);
  const body = JSON.stringify({ query: `{ ${aliasesOf('BIG', 10)} }` });
  let received = 0;
  const closed = new Promise<void>((resolve, reject) => {
    const socket = connect(facade.port, '127.0.0.1', () =>
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nx-request-id: cut-mid-body\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    onTestFinished(() => void socket.destroy());
    // The status and the first bytes of the 20 MB answer are here: the client leaves.
    socket.once('data', (chunk) => ((received = chunk.length), socket.destroy()));
    socket.on('error', reject).once('close', () => resolve());
  });
  await closed;
  expect(received).toBeLessThan(1_000_000);
  // The request was served (its line says 200: the status went out) ...
  expect(lines.find((l) => l.reqId === 'cut-mid-body')).toMatchObject({ status: 200 });
  // ... but its answer never arrived whole: that is a disconnect.
  await expect.poll(() => disconnects(facade.origin), { timeout: 5_000 }).toBe(1);
});
