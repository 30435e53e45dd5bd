import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const MiB = 2 ** 20;

// Every answer about 8 KB: 400 distinct reads weigh some six times the 1 MiB bound.
const padded = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, pad: 'x'.repeat(8_192) }] }),
  );
};

const fixture = useFacade({ PIM_STALE_MAX_BYTES: String(MiB) }, padded);

const read = (key: string, ids: string[]) =>
  fixture.facade.post(
    `{ ${ids.map((id, i) => `r${i}: catalogProducts(catalogId: "${id}")`).join(' ')} }`,
    {},
    {
      'x-api-key': key,
    },
  );
const ids = (prefix: string, from: number) => Array.from({ length: 10 }, (_, i) => `${prefix}${from + i}`);

// The copies were one LRU for every credential: a key that read page after page pushed out every other key's copies,
// and its holders got errors at the next outage, though they read nothing more.
it("keeps a credential's copies when another credential crawls past the bound", async () => {
  expect((await read('key-of-a-123', ids('A', 0))).body.errors).toBeUndefined();
  for (let batch = 0; batch < 40; batch++) {
    expect((await read('key-of-b-456', ids('B', batch * 10))).body.errors).toBeUndefined();
  }
  fixture.upstream.respond(faults.status(500));
  const held = await read('key-of-a-123', ids('A', 0));
  expect(held.body.errors).toBeUndefined();
  expect(held.body.extensions.stale).toHaveLength(10);
  // The crawler keeps its own newest reads, within the bound.
  const newest = await read('key-of-b-456', ids('B', 390));
  expect(newest.body.extensions.stale).toHaveLength(10);
});
