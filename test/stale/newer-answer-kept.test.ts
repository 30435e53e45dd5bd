import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from '../stale/reads.ts';

const servers = closedAfterEach();

const withHeaders =
  (version: string, headers: Record<string, string>) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    answerFor(version)(req, res);
  };

// docs/operations.md, Stale answers: "every 2xx answer ... is kept per URL and credential", and a failed call gets
// "the kept answer" — the last good one. src/pim/steps/stale.ts skips keeping a new answer whose production time is
// within a second of the copy held (meant for the HTTP cache replaying the same answer), whatever its body. An answer
// the PIM produced anew with other data (a publish, read right after the previous read) is then never kept: at the
// next outage the client that has already been shown v2 is shown v1 again, as the "last good answer".
it.each([
  ['without the HTTP cache', { PIM_CACHE: 'false' }, {}],
  ['with answers the PIM says to revalidate (no-cache)', {}, { 'cache-control': 'no-cache' }],
])('%s: the newest good answer is the one that stands in for a failure', async (_name, env, headers) => {
  const { upstream, facade } = await servers.start(withHeaders('v1', headers), {
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    ...env,
  });
  const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "PUBLISHED") }')).body;

  expect((await ask()).data.p.data[0].version).toBe('v1');
  // The PIM publishes v2; the next read shows it.
  upstream.respond(withHeaders('v2', headers));
  const fresh = await ask();
  expect(fresh.errors).toBeUndefined();
  expect(fresh.data.p.data[0].version).toBe('v2');

  // The PIM fails: the last good answer is v2, not the v1 it replaced.
  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = await ask();
  expect(during.extensions?.stale).toHaveLength(1);
  expect(during.data.p.data[0].version).toBe('v2');
});
