import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// A catalog page of 1.5 MB: what a real caller reads.
const page: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, text: 'x'.repeat(1_500_000) }] }));
};

// 100 representations, each resolving to its key alone (no PIM call), 15 aliases of 3,900 characters: an answer of
// some 5.8 MB written for a 63 KB request, as test/hardening/response-echo-bytes.test.ts sends.
const representations = Array.from({ length: 100 }, (_, i) => ({ __typename: 'Catalog', catalogId: String(i) }));
const aliasQuery = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { ${Array.from(
  { length: 15 },
  (_, i) => `a${i}${'_'.repeat(3_900)}: __typename`,
).join(' ')} } } }`;

/** One whole POST under `key`, whose answer is never read: its bytes stay held until HTTP_SEND_TIMEOUT_MS. */
function unreadPost(port: number, key: string, body: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nX-API-KEY: ${key}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => undefined).once('error', reject);
    onTestFinished(() => void socket.destroy());
  });
}

it('made-up keys share one byte share: they cannot hold the whole process cap against a real credential', async () => {
  const { upstream, facade } = await servers.start(page, {
    PIM_API_KEY: 'the-servers-own-key',
    PIM_MAX_INFLIGHT_BYTES: '24000000',
    PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '18000000',
  });
  const body = JSON.stringify({ query: aliasQuery, variables: { r: representations } });
  // Five callers that never read, each with a key of its own that the PIM never saw (no call reaches it).
  for (let i = 0; i < 5; i++) await unreadPost(facade.port, `made-up-key-${i}-${'k'.repeat(20)}`, body);
  await sleep(500);
  expect(upstream.requests).toHaveLength(0);
  // A keyless caller (the server's own key, a real credential from the start) reads one 1.5 MB page.
  const answer = await facade.post('{ catalogProducts(catalogId: "c1") }');
  expect(
    answer.body.errors?.map((e: { message: string }) => e.message),
    'made-up keys held the whole process cap',
  ).toBeUndefined();
  expect(JSON.stringify(answer.body.data)).toContain('xxxx');
});
