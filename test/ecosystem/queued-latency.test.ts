import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

// docs/operations.md: "time spent queued is never blamed on the upstream"; test/ecosystem/queued-attempts.test.ts:
// "its seconds in the queue are no PIM latency". `pim_upstream_request_duration_seconds` ("Latency of one attempt
// against the PIM REST service") timed each attempt from before it queued for a connection (PIM_MAX_CONCURRENCY):
// with the connections busy, the PIM's latency on the dashboard grew by the façade's own queueing.
const servers = closedAfterEach();

const bucket = (text: string, le: string) => {
  const sample = `pim_upstream_request_duration_seconds_bucket{le="${le}",operation="searchProducts",status="2xx"} `;
  const line = text.split('\n').find((l) => l.startsWith(sample));
  return line === undefined ? undefined : Number(line.slice(sample.length));
};

it('times an attempt from when it leaves the connection queue, not from when it joined it', async () => {
  // Every call takes the PIM about 600 ms; one connection, so the later calls wait for the earlier ones first.
  const { upstream, facade } = await servers.start(faults.slowHeaders(600), {
    PIM_MAX_CONCURRENCY: '1',
    PIM_CACHE: 'false',
  });
  const answers = await Promise.all(
    ['A', 'B', 'C'].map((id) => facade.post(`{ catalogProducts(catalogId: "${id}") }`)),
  );
  for (const { body } of answers) expect(body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(3);
  const text = (await facade.get('/metrics')).text;
  // Each attempt took the PIM ~0.6 s: all under 1 s, whatever the ones behind waited in the queue (up to 1.2 s).
  expect(bucket(text, '+Inf')).toBe(3);
  expect(
    bucket(text, '1'),
    text
      .split('\n')
      .filter((l) => l.startsWith('pim_upstream_request_duration_seconds_sum'))
      .join('\n'),
  ).toBe(3);
});
