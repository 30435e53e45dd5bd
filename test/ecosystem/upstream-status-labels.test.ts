import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// The `status` label of pim_upstream_requests_total and its histogram took any three-digit status the PIM (or a
// proxy in front of it) sent: up to 900 values per operation, times the histogram's buckets. A status HTTP does not
// register is labelled by its class; a registered one keeps its number.
it('labels an unregistered upstream status by its class, a registered one by its number', async () => {
  const statuses = [599, 477, 503, 418];
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const status = Number(/catalogs\/S(\d+)\//.exec(req.url ?? '')![1]);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"status":0}');
  };
  const { facade } = await servers.start(answer, { PIM_CACHE: 'false', PIM_RETRIES: '0' });
  for (const status of statuses) await facade.post(`{ catalogProducts(catalogId: "S${status}") }`);
  const metrics = await (await fetch(`${facade.origin}/metrics`)).text();
  const labels = [...metrics.matchAll(/^pim_upstream_requests_total\{[^}]*status="([^"]+)"\} \d+$/gm)].map((m) => m[1]);
  expect(labels.sort()).toEqual(['418', '4xx', '503', '5xx']);
});
