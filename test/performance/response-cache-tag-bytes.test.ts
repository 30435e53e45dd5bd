import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// A small page for any catalog, fresh for a minute: what a PIM may answer for an id it does not know.
function emptyPage(_req: IncomingMessage, res: ServerResponse) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end('{"status":200,"data":[]}');
}

// The cache of results (RESPONSE_CACHE_MAX_BYTES) weighed an entry by its key and text alone; each entry also keeps
// the tags of every catalog and classification it read (percent-encoded ids: a 128-character id of `€` is a tag of
// 1,160 characters) and its response headers. 15 aliases of such ids held three times what the entry was counted.
it('an entry of the cache of results counts the tags it keeps', async () => {
  const { facade } = await servers.start(emptyPage, { RESPONSE_CACHE_MAX_BYTES: String(8 * 2 ** 20) });
  const ids = Array.from({ length: 15 }, (_, i) => `${'€'.repeat(125)}${String(i).padStart(3, '0')}`);
  const query = `{ ${ids.map((id, i) => `a${i}: catalogProducts(catalogId: "${id}")`).join(' ')} }`;
  const { body } = await facade.post(query);
  expect(body.errors).toBeUndefined();
  const { entries, bytes } = facade.app.responses!.stats();
  expect(entries).toBe(1);
  // What the entry's tags alone hold (ASCII strings: a byte a character).
  const tagBytes = ids.reduce((sum, id) => sum + `catalog:${encodeURIComponent(id)}`.length, 0);
  expect(tagBytes).toBeGreaterThan(15_000);
  expect(bytes).toBeGreaterThanOrEqual(tagBytes);
});
