import { describe, expect, it } from 'vitest';
import { startFacade, useFacade } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// Products answer from the echo; group reads are 404, except group BUSY, which is 503 once.
let busyOnce = true;
function handler(req: Parameters<typeof echo>[0], res: Parameters<typeof echo>[1]) {
  if (req.url?.includes('/groups/BUSY') && busyOnce) {
    busyOnce = false;
    return void res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":503}');
  }
  if (req.url?.includes('/groups/')) {
    return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No group"}');
  }
  echo(req, res);
}

const fixture = useFacade({ PIM_CACHE: 'false', PIM_RETRY_BASE_MS: '1' }, handler);

const post = (query: string, headers?: Record<string, string>) => fixture.facade.post(query, undefined, headers);

/** The value of one sample line in Prometheus text format, e.g. `name{a="b"}`. */
async function scrape() {
  const response = await fetch(`${fixture.facade.origin}/metrics`);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  const text = await response.text();
  return (sample: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
    return line === undefined ? undefined : Number(line.slice(sample.length + 1));
  };
}

describe('/metrics', () => {
  it('counts operations, errors by code, upstream calls by operation and status, dedup hits and retries', async () => {
    const { body } = await post(`query Observed {
      a: catalogProducts(catalogId: "MACHINERY", pageSize: 1)
      b: catalogProducts(catalogId: "MACHINERY", pageSize: 1)
      missing: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "NOPE")
      busy: classificationGroup(classificationId: "ECLASS-DEMO", classificationGroupId: "BUSY")
    }`);
    expect(body.errors.map((e: any) => e.extensions.code).sort()).toEqual(['NOT_FOUND', 'NOT_FOUND']);
    const value = await scrape();
    const op = 'operation_type="query",operation_name="Observed"';
    expect(value(`graphql_operations_total{${op}}`)).toBe(1);
    expect(value(`graphql_operation_duration_seconds_count{${op}}`)).toBe(1);
    expect(value('graphql_errors_total{code="NOT_FOUND"}')).toBe(2);
    expect(value('pim_upstream_requests_total{operation="searchProducts",status="2xx"}')).toBe(1);
    expect(value('pim_upstream_requests_total{operation="getClassificationGroup",status="404"}')).toBe(2);
    expect(value('pim_upstream_requests_total{operation="getClassificationGroup",status="503"}')).toBe(1);
    expect(value('pim_upstream_request_duration_seconds_count{operation="searchProducts",status="2xx"}')).toBe(1);
    expect(value('pim_dedup_hits_total{operation="searchProducts"}')).toBe(1);
    expect(value('pim_upstream_retries_total{operation="getClassificationGroup"}')).toBe(1);
    expect(value('pim_upstream_breaker_state{state="closed"}')).toBe(1);
    expect(value('pim_upstream_breaker_state{state="open"}')).toBe(0);
    expect(fixture.upstream.requests).toHaveLength(4);
  });

  it('bounds the operation names a client can turn into series', async () => {
    for (let i = 0; i < 110; i++) await post(`query Flood${i} { __typename }`);
    const sample = await scrape();
    const named = (name: string) => sample(`graphql_operations_total{operation_type="query",operation_name="${name}"}`);
    expect(named('Flood0')).toBe(1);
    expect(named('Flood109')).toBeUndefined();
    // At most 100 names are kept, and "Observed" from the test above is one of them.
    expect(named('other')).toBeGreaterThanOrEqual(10);
  });

  it('keeps a scrape under 256 KB when 100 clients send 60 KB operation names', async () => {
    // A fresh app, so the attack meets an empty name table as on a newly started replica.
    const attacked = await startFacade(fixture.upstream.url);
    try {
      for (let i = 0; i < 100; i++) {
        const { status } = await attacked.post(`query N${i}_${'x'.repeat(60_000)} { __typename }`);
        expect(status).toBe(200);
      }
      const attackedScrape = await (await fetch(`${attacked.origin}/metrics`)).text();
      expect(Buffer.byteLength(attackedScrape)).toBeLessThan(256 * 1024);
      expect(attackedScrape).toMatch(/graphql_operations_total\{operation_type="query",operation_name="other"\} 100\n/);
      // The worst a client can still do: 100 names at the longest length kept.
      for (let i = 0; i < 100; i++)
        await attacked.post(`query N${String(i).padStart(3, '0')}_${'x'.repeat(43)} { __typename }`);
      const fullScrape = await (await fetch(`${attacked.origin}/metrics`)).text();
      expect(fullScrape).toContain(`operation_name="N099_${'x'.repeat(43)}"`);
      expect(Buffer.byteLength(fullScrape)).toBeLessThan(256 * 1024);
      expect(fixture.upstream.requests).toHaveLength(0);
    } finally {
      await attacked.close();
    }
  });

  it('moves or turns off the endpoint with METRICS_PATH', async () => {
    const moved = await startFacade(fixture.upstream.url, { METRICS_PATH: '/internal/metrics' });
    const off = await startFacade(fixture.upstream.url, { METRICS_PATH: 'off' });
    try {
      expect((await fetch(`${moved.origin}/internal/metrics`)).status).toBe(200);
      expect((await fetch(`${moved.origin}/metrics`)).status).not.toBe(200);
      expect((await fetch(`${off.origin}/metrics`)).status).not.toBe(200);
    } finally {
      await Promise.all([moved.close(), off.close()]);
    }
  });

  // As on METRICS_PORT's listener (a monitor checking the endpoint with HEAD got 404 here, 200 there).
  it('answers HEAD as GET, without the body', async () => {
    const head = await fetch(`${fixture.facade.origin}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await head.text()).toBe('');
  });

  it('keeps a registry per app, so two apps in one process count apart', async () => {
    const other = await startFacade(fixture.upstream.url);
    try {
      const response = await fetch(`${other.origin}/metrics`);
      expect(await response.text()).not.toMatch(/graphql_operations_total\{/);
    } finally {
      await other.close();
    }
  });
});
