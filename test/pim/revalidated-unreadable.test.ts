import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// A 200 cut short in transit carries the PIM's ETag, and its entry is revalidated on each use (no-cache, or
// max-age=0). The PIM, asked with If-None-Match, says 304: undici replays the stored, unreadable body. The 304 went
// over the wire (admission set `sent.wire`), so the PimError is not marked `cached` and send's drop-and-ask-again
// (650e313) never runs: the replay fails the field and counts as a not_json fault of a PIM that answered well.
// Before 650e313 this body (its last character `[`) was never stored at all.
const json = 'application/json';
it.each([
  ['no-cache', 'no-cache', false],
  ['max-age=0', 'max-age=0', false],
  ['no-cache, the 304 restating it', 'no-cache', true],
])('a stored 200 cut short, confirmed by a 304 (%s), is dropped and asked again', async (_n, cacheControl, restate) => {
  const { facade } = await servers.start(
    (req, res, index) => {
      const headers = { 'content-type': json, 'cache-control': cacheControl, etag: '"v1"' };
      if (req.headers['if-none-match'] === '"v1"') {
        return res.writeHead(304, restate ? { etag: '"v1"', 'cache-control': cacheControl } : { etag: '"v1"' }).end();
      }
      return index === 0
        ? res.writeHead(200, headers).end('{"status":200,"data":[')
        : res.writeHead(200, headers).end('{"status":200,"data":[]}');
    },
    { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toHaveLength(1);
  const failed: number[] = [];
  for (let i = 0; i < 8; i++) if ((await facade.post(query)).body.errors) failed.push(i);
  // Every request after the first reads the PIM's answer.
  expect(failed).toEqual([]);
  expect(facade.app.upstream.breaker).toBe('closed');
  const faults = /^pim_upstream_faults_total\{fault="not_json"\} (\d+)$/m.exec((await facade.get('/metrics')).text);
  expect(Number(faults?.[1] ?? 0)).toBe(1);
});
