import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { faults } from '../helpers/upstream.ts';

// docs/operations.md, Shutdown: "What still runs when the grace ends is cut; then the upstream pool closes". A request
// cut there was logged `request completed` with status 200 (its client got a reset), and the pool closing under its
// upstream call was reported as the PIM failing: an `Upstream not answering` warn, `UPSTREAM_ERROR` in
// graphql_errors_total and pim_upstream_requests_total, though the PIM was healthy and merely slower than the grace.
const { start } = closedAfterEach();

it('a request cut at the end of the grace is a client gone, not a PIM failure', async () => {
  const { logger, lines } = captureLogs('info');
  const { upstream, facade } = await start(
    // An answer already coming, read to its end (test/http/shutdown-queued.test.ts): still running when the grace ends.
    faults.slowBody,
    {
      SHUTDOWN_GRACE_MS: '300',
      PIM_CACHE: 'false',
    },
    { logger },
  );
  const answer = fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'cut' },
    body: JSON.stringify({ query: '{ classificationGroups(classificationId: "A") }' }),
  }).then(
    (response) => `status ${response.status}`,
    () => 'cut',
  );
  await expect.poll(() => upstream.requests.length).toBe(1);
  await facade.server.shutdown();
  expect(await answer).toBe('cut');
  // Whatever the operation still does after the cut is done a few turns later.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const scrape = (await facade.app.metrics()).body;
  expect({
    requestLine: lines.filter((line) => line.reqId === 'cut').map((line) => [line.msg, line.status]),
    warnings: lines.filter((line) => line.level >= 40).map((line) => line.msg),
    pimBlamed: scrape.split('\n').filter((line) => /UPSTREAM_ERROR/.test(line) && !/_bucket|_sum/.test(line)),
  }).toEqual({ requestLine: [['client went away', undefined]], warnings: [], pimBlamed: [] });
});
