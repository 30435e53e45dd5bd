import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// docs/configuration.md / operations.md: GRAPHQL_BUDGET_MS (default 20 s) bounds an operation, PIM_TIMEOUT_MS (default
// 10 s) an upstream attempt. graphql_operation_duration_seconds's highest finite bucket was 10 s: every operation between
// 10 s and its 20 s budget landed in +Inf alone, so histogram_quantile() reports 10 s for a p99 that is really at the
// budget, exactly when the PIM is slow. Upstream attempts cut by PIM_TIMEOUT_MS (10.00x s) fell past le="10" too.
const { start } = closedAfterEach();

const finiteBuckets = (text: string, metric: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}_bucket{`))
    .map((l) => /le="([^"]+)"/.exec(l)![1]!)
    .filter((le) => le !== '+Inf')
    .map(Number);

describe('duration buckets against the default deadlines', () => {
  it('reach the default operation budget (20 s) and past the upstream timeout (10 s)', async () => {
    const { facade } = await start(echo, { PIM_CACHE: 'false' });
    expect((await facade.post('query B { catalogProducts(catalogId: "A") }')).status).toBe(200);
    const text = await (await fetch(`${facade.origin}/metrics`)).text();
    const operation = Math.max(...finiteBuckets(text, 'graphql_operation_duration_seconds'));
    const upstream = Math.max(...finiteBuckets(text, 'pim_upstream_request_duration_seconds'));
    expect(operation).toBeGreaterThanOrEqual(20);
    expect(upstream).toBeGreaterThan(10);
  });
});
