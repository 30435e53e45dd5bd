import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor } from './reads.ts';

const servers = closedAfterEach();

const withHeaders =
  (version: string, headers: Record<string, string>) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    answerFor(version)(req, res);
  };

// stale.ts ends an older kept copy that must not stand in for a newer answer (must-revalidate; and, since the last
// session, a newer answer too big to keep: "it must not stand in for the newer answer"). A newer answer that is not
// kept because the PIM marked it `no-store`, or `Vary: *`, left the older copy in place: at the next outage the
// client that was shown v2 is shown v1 again.
it.each([
  ['no-store', { 'cache-control': 'no-store' }],
  ['Vary: *', { vary: '*' }],
])('a newer answer marked %s ends the older copy rather than leaving it to stand in', async (_name, headers) => {
  const { upstream, facade } = await servers.start(withHeaders('v1', {}), {
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "PUBLISHED") }')).body;
  expect((await ask()).data.p.data[0].version).toBe('v1');
  upstream.respond(withHeaders('v2', headers));
  const fresh = await ask();
  expect(fresh.errors).toBeUndefined();
  expect(fresh.data.p.data[0].version).toBe('v2');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = await ask();
  expect(during.data?.p?.data?.[0]?.version).not.toBe('v1');
});
