import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// docs/operations.md: at shutdown "the upstream pool closes (a background refresh or probe still out is cut)". Cutting
// it is the façade's own doing, not the upstream failing: it was logged `Upstream not answering` (warn), the last line
// an operator reads of a replica that stopped during a rollout, of a PIM that was merely slower than the grace.
const { start } = closedAfterEach();
const query = '{ classificationGroups(classificationId: "A") }';
const slowly = (ms: number) => (req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) =>
  void setTimeout(() => res.destroyed || echo(req, res), ms);

it('cutting a background refresh at shutdown logs no upstream failure', async () => {
  const { logger, lines } = captureLogs('info');
  let slow = false;
  const { upstream, facade } = await start(
    (req, res) => {
      res.setHeader('cache-control', 'max-age=0, stale-while-revalidate=60');
      if (slow) return slowly(3_000)(req, res);
      echo(req, res);
    },
    { SHUTDOWN_GRACE_MS: '300', PIM_TIMEOUT_MS: '8000' },
    { logger },
  );
  await facade.post(query);
  slow = true;
  expect((await facade.post(query)).body.extensions.stale[0].reason).toBe('revalidating');
  await expect.poll(() => upstream.requests.length).toBe(2);
  await facade.server.shutdown();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
});

it('cutting a readiness probe at shutdown logs no upstream failure', async () => {
  const { logger, lines } = captureLogs('info');
  const { upstream, facade } = await start(
    slowly(1_500),
    { SHUTDOWN_GRACE_MS: '300', PIM_TIMEOUT_MS: '8000' },
    { logger },
  );
  // Checks wait 0.9 s for the probe, which goes on.
  expect((await facade.get('/readiness')).status).toBe(503);
  expect(upstream.requests).toHaveLength(1);
  await facade.server.shutdown();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([]);
});
