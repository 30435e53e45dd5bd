import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// A 304 that confirms the version a call asked about, arriving after a later call already read and stored the newer
// version (a publish came between; the 304 was slow on its way). The stored answer is the newer one: the late 304 is
// about another representation (its ETag is not the stored one's) and must not bring the old one back (RFC 9111 §4.3.4
// updates only stored responses its validator selects). A re-store of the confirmed answer (tried, then withdrawn: undici
// drops a stored answer a 304 with Cache-Control confirms, its issue 5505) wrote the old body over the new one, fresh for
// the 304's whole max-age, where undici alone only drops the entry.
const servers = closedAfterEach();
const key = { 'x-api-key': 'alice-key' };

describe('a late 304 for an older version than the one stored since', () => {
  it('does not put the older answer back over the newer one', async () => {
    let version = 1;
    let releaseLate: (() => void) | undefined;
    const pim = (req: IncomingMessage, res: ServerResponse) => {
      const tag = req.headers['if-none-match'];
      if (tag === '"v1"' && version === 1) {
        // Confirmed as of now, answered late.
        releaseLate = () => void res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=60' }).end();
        return;
      }
      if (tag === `"v${version}"`) {
        return void res.writeHead(304, { etag: `"v${version}"`, 'cache-control': 'max-age=60' }).end();
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0', etag: `"v${version}"` });
      res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ version }] }));
    };
    const env = { PIM_COALESCE: 'false', PIM_STALE_IF_ERROR_MS: '0' };
    const { upstream, facade } = await servers.start(pim, env);
    const query = (i: number) => `{ a${i}: catalogProducts(catalogId: "x") }`;
    // v1 stored, stale at once (max-age=0), revalidated on each use.
    expect((await facade.post(query(0), undefined, key)).body.data.a0.data).toEqual([{ version: 1 }]);
    // A revalidation goes out; the PIM confirms v1 but its answer is slow.
    const late = facade.post(query(1), undefined, key);
    while (!releaseLate) await sleep(5);
    // The catalog is published; the next call reads v2 whole (v1 no longer matches) and stores it.
    version = 2;
    expect((await facade.post(query(2), undefined, key)).body.data.a2.data).toEqual([{ version: 2 }]);
    // Now the slow 304 arrives.
    releaseLate();
    expect((await late).body.data.a1.data).toEqual([{ version: 1 }]);
    await sleep(50);
    const after = await facade.post(query(3), undefined, key);
    expect({ after: after.body.data.a3.data, sent: upstream.requests.length }).toEqual({
      after: [{ version: 2 }],
      sent: 4,
    });
  });
});
