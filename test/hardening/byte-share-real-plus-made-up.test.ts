import { connect, type Socket } from 'node:net';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// docs/operations.md, Resilience: "the requests of one credential may hold PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL of
// the upstream bytes held at once (three quarters ...); keys not seen accepted hold one such share together, as at the
// door." At the door, "in the quarter one credential leaves free, a credential (the share of unproven keys too) holding
// half of that quarter already is refused, so one credential's share and the made-up keys beside it cannot hold every
// slot between them". The byte limits (src/pim/rest/byte-limits.ts, hold) have no such reserve: one credential's three
// quarters plus the unproven keys' share fill the whole process cap, and every other real credential gets
// UPSTREAM_TOO_LARGE. With PIM_API_KEY, the attacker needs no key at all: keyless callers are the server's share.

const servers = closedAfterEach();

// A catalog page of 1.5 MB: what the victim reads.
const page: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, text: 'x'.repeat(1_500_000) }] }));
};

// 100 representations resolving to their keys alone (no PIM call), 15 aliases of 3,900 characters: some 5.85 MB of
// answer for a 63 KB request (as test/hardening/response-echo-bytes.test.ts sends).
const representations = (n: number) =>
  Array.from({ length: 100 }, (_, i) => ({ __typename: 'Catalog', catalogId: `${n}-${i}` }));
const aliasQuery = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { ${Array.from(
  { length: 15 },
  (_, i) => `a${i}${'_'.repeat(3_900)}: __typename`,
).join(' ')} } } }`;

/** One POST whose answer is read up to its first bytes, then no more: its bytes stay held (HTTP_SEND_TIMEOUT_MS). */
function heldAnswer(port: number, headers: Record<string, string>, n: number, held: Socket[]): Promise<Socket> {
  const body = JSON.stringify({ query: aliasQuery, variables: { r: representations(n) } });
  const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n${head.join('')}` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
    held.push(socket);
    socket.on('error', () => undefined).once('error', reject);
    // The answer has begun: it was counted as it was serialized. Read no more of it.
    socket.once('data', (chunk) => {
      socket.pause();
      expect(chunk.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
      resolve(socket);
    });
  });
}

it('one credential and the made-up keys beside it cannot hold every upstream byte between them', async () => {
  const { facade } = await servers.start(page, {
    PIM_API_KEY: 'the-servers-own-key',
    PIM_MAX_INFLIGHT_BYTES: '24000000',
    PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '18000000',
    RESPONSE_CACHE_MAX_BYTES: '0',
  });
  const victim = { 'x-api-key': 'victim-real-key' };
  const read = async (id: string) => {
    const answer = await facade.post(`{ catalogProducts(catalogId: "${id}") }`, undefined, victim);
    return answer.body.errors?.map((e: { message: string }) => e.message);
  };
  const held: Socket[] = [];
  try {
    // The victim's key is real: the PIM answered it.
    expect(await read('c0')).toBeUndefined();
    // Keyless callers (the server's key: a real credential from the start) hold three answers of 5.85 MB unread, just
    // under that credential's share of 18 MB.
    for (let n = 0; n < 3; n++) await heldAnswer(facade.port, {}, n, held);
    // Room is left for the other credentials: the victim reads its 1.5 MB page.
    expect(await read('c1')).toBeUndefined();
    // One request with a made-up key (no PIM call) holds its 5.85 MB in the share of unproven keys.
    await heldAnswer(facade.port, { 'x-api-key': 'made-up-key-0001' }, 3, held);
    // The victim still gets its page: the made-up keys must not take the room real credentials have.
    expect(await read('c2'), 'a real credential starved of bytes').toBeUndefined();
  } finally {
    for (const socket of held) socket.destroy();
  }
});
