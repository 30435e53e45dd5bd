import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// The stale step ends a copy of a call sent before the PIM's 404 of its URL (stale.ts `standIn` reads
// verdicts.since), but its stale-while-revalidate branch checks only the 401s (`current` with revocations.since):
// a 200 of a call sent before the 404 and answered after it is kept again, and served stale-while-revalidate.
it('after the PIM answered 404, no copy of a call sent before it is served stale-while-revalidate', async () => {
  const answer = (res: ServerResponse, status: number) => {
    const body =
      status === 200
        ? '{"status":200,"meta":{},"data":[{"id":"G","version":"old"}]}'
        : '{"status":404,"meta":{},"error":"gone"}';
    // Already as old as its max-age (Age: 1): past its freshness from the start, inside the stale-while-revalidate window.
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=1', age: '1' }).end(body);
  };
  // Answers the first call once the test says so.
  let release = () => {};
  const { facade, upstream } = await servers.start(
    (_req, res, index) => {
      // The first call, sent while the group still existed, is answered last; every later one is the PIM's 404.
      if (index === 0) return void (release = () => answer(res, 200));
      answer(res, 404);
    },
    { PIM_COALESCE: 'false', PIM_CACHE: 'false', PIM_RETRIES: '0', PIM_STALE_WHILE_REVALIDATE_MS: '60000' },
  );
  const read = () => facade.post('{ classificationGroups(classificationId: "K") }');
  const slow = read();
  await expect.poll(() => upstream.requests.length).toBe(1);
  // The group is deleted: the PIM says so to the next call.
  const verdict = await read();
  expect(verdict.body.errors[0].extensions.code).toBe('NOT_FOUND');
  // The call sent before it comes back with the group as it was.
  release();
  expect((await slow).body.errors).toBeUndefined();
  // The next read must not get the deleted group.
  const after = await read();
  expect(after.body.extensions?.stale, 'a copy ended by the 404 served stale-while-revalidate').toBeUndefined();
  expect(after.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
});
