import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// 650e313: a stored 2xx that cannot be read is dropped and the PIM asked once more, in the same attempt. The bytes of
// the unreadable replay were charged to the request's byte account (readLimitedText) and are never given back,
// though the body is thrown away: the answer asked for after the drop then counts on top of them, so a request whose
// answer alone fits PIM_MAX_REQUEST_BYTES is refused UPSTREAM_TOO_LARGE. Before 650e313 this page was never stored.
it('does not charge the dropped replay to the request that asks the PIM again', async () => {
  const page = `<html>${'x'.repeat(60_000)}</html>`;
  const answer = JSON.stringify({ status: 200, data: 'y'.repeat(60_000) });
  const { upstream, facade } = await servers.start(
    (_req, res, index) =>
      index === 0
        ? res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'max-age=60' }).end(page)
        : res.writeHead(200, { 'content-type': 'application/json' }).end(answer),
    { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0', PIM_MAX_REQUEST_BYTES: '100000' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toHaveLength(1);
  const second = await facade.post(query);
  expect(upstream.requests).toHaveLength(2);
  expect(second.body.errors?.map((e: any) => e.extensions.code)).toBeUndefined();
  expect(second.body.data.classificationGroups.data).toHaveLength(60_000);
});
