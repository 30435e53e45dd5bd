import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const { start } = closedAfterEach();

// docs/operations.md, Monitoring: `pim_cache_outcomes_total{outcome}` counts "loads by how they were answered: `hit` (no
// call went to the PIM), `miss` (one did ...)", and Stale answers gives the hit ratio as hit / (hit + miss). The HTTP
// cache keeps the PIM's own 404 (its envelope) by its Cache-Control (docs: "a 404 only when its body is the PIM's
// envelope"), and replays it with no call: that load is a hit, and the one that asked the PIM a miss.
const sample = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
};

it('counts the loads of a 404 the HTTP cache keeps: the PIM asked once (miss), then replayed (hit)', async () => {
  const { upstream, facade } = await start((_req, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
      .end('{"status":404,"meta":{},"error":"No group"}'),
  );
  const query = 'query Gone { classificationGroup(classificationId: "C", classificationGroupId: "G") }';
  for (let i = 0; i < 2; i++) {
    const { body } = await facade.post(query);
    expect(body.errors[0].extensions.code).toBe('NOT_FOUND');
  }
  // The second load was answered from the HTTP cache: the PIM was asked once.
  expect(upstream.requests).toHaveLength(1);
  const text = (await facade.get('/metrics')).text;
  const outcomes = {
    hit: sample(text, 'pim_cache_outcomes_total{outcome="hit"}'),
    miss: sample(text, 'pim_cache_outcomes_total{outcome="miss"}'),
  };
  expect(outcomes, 'two loads, one of them from the cache').toEqual({ hit: 1, miss: 1 });
});
