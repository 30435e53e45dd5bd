import type { PricedPlugin } from './priced-plugins.ts';
import { CACHEABLE_PREFIX } from './upstream.ts';

/** One server under test: the floor (maybe with façade plugins), or the façade with some settings or Node flags. */
export interface Target {
  name: string;
  kind: 'floor' | 'facade';
  env?: Record<string, string>;
  plugins?: PricedPlugin[];
  flags?: string[];
}

/** The façade without its cache of whole results: the browsing mix runs it beside the bill's baseline, in one process. */
export const UNCACHED = 'façade, RESPONSE_CACHE_MAX_BYTES=0';

/**
 * Each feature of the bill of costs and the target that prices it: the façade with a setting that
 * turns it off, or, for plugins no setting turns off, the floor with that plugin added.
 */
export const bill: { feature: string; target: string; env?: Record<string, string>; plugins?: PricedPlugin[] }[] = [
  { feature: 'log line', target: 'façade, LOG_LEVEL=warn', env: { LOG_LEVEL: 'warn' } },
  { feature: 'metrics (the plugin)', target: 'floor + metrics', plugins: ['metrics'] },
  { feature: 'abuse limits and the cost rule', target: 'floor + limits', plugins: ['limits'] },
  { feature: 'security plugin', target: 'floor + security', plugins: ['security'] },
  { feature: 'coalescing', target: 'façade, PIM_COALESCE=false', env: { PIM_COALESCE: 'false' } },
  { feature: 'HTTP cache', target: 'façade, PIM_CACHE=false', env: { PIM_CACHE: 'false' } },
  { feature: 'response cache', target: UNCACHED, env: { RESPONSE_CACHE_MAX_BYTES: '0' } },
];

/** One load shape; `targets` names the targets it runs against (direct REST is run apart). */
export interface Scenario {
  name: string;
  connections: number;
  body: () => string;
  targets: string[];
}

// Unique in every run, so no id repeats across rounds, targets or runs (no cache or coalescing help).
const run = Date.now().toString(36);
let counter = 0;
/** A catalog id never asked before. */
export const freshId = () => `c${run}-${counter++}`;

// Zipf(1) over 1,000 ids: P(k) ∝ 1/k, drawn by binary search over the cumulative weights.
const cumulative: number[] = [];
for (let k = 1, sum = 0; k <= 1_000; k++) cumulative.push((sum += 1 / k));
/** An id of the catalog-browsing mix, Zipf(1) over 1,000 (id 1 is the most asked). */
export function zipfId(): string {
  const x = Math.random() * cumulative.at(-1)!;
  let [lo, hi] = [0, cumulative.length - 1];
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return `${CACHEABLE_PREFIX}${lo + 1}`;
}

const query =
  'query Products($id: ID!, $size: Int) { catalogProducts(catalogId: $id, languageId: "en", pageSize: $size) }';
/** A request body with the id and page size as variables, as Apollo Client and urql send them. */
export const withVariables = (id: string, size: number) => JSON.stringify({ query, variables: { id, size } });
const aliased = Array.from({ length: 15 }, (_, i) => `p${i}: products(languageId: "en", page: ${i})`).join(' ');
const entities = `query Entities($r: [_Any!]!) { _entities(representations: $r) { ... on Catalog { ${aliased} } } }`;
/**
 * A gateway's fetch of 100 catalogs with 15 searches each: 1,500 calls asked, the first 50 made (the default
 * PIM_MAX_CALLS_PER_REQUEST), the other 1,450 field errors. What a request of many errors costs.
 */
export const pastCallsCap = () =>
  JSON.stringify({
    query: entities,
    variables: { r: Array.from({ length: 100 }, () => ({ __typename: 'Catalog', catalogId: freshId() })) },
  });
const inText = (id: string) =>
  JSON.stringify({ query: `{ catalogProducts(catalogId: "${id}", languageId: "en", pageSize: 10) }` });

/** The scenarios of issue 10's table, in the order they run in each round. */
export function scenarios(bill: string[], capped: string[]): Scenario[] {
  return [
    {
      name: 'one field, distinct ids in the query text',
      connections: 50,
      body: () => inText(freshId()),
      targets: ['floor', 'façade'],
    },
    {
      name: 'distinct ids as variables',
      connections: 50,
      body: () => withVariables(freshId(), 10),
      targets: ['floor', 'façade', ...bill, ...capped],
    },
    {
      name: '64 products (17 KB), distinct ids',
      connections: 50,
      body: () => withVariables(freshId(), 64),
      targets: ['floor', 'façade'],
    },
    { name: 'one connection', connections: 1, body: () => withVariables(freshId(), 10), targets: ['floor', 'façade'] },
    {
      name: '200 connections',
      connections: 200,
      body: () => withVariables(freshId(), 10),
      targets: ['floor', 'façade', ...capped],
    },
    {
      name: 'browsing mix (Zipf(1) over 1,000 ids, max-age=60)',
      connections: 50,
      body: () => withVariables(zipfId(), 10),
      targets: ['floor', 'façade', bill[0]!, UNCACHED, ...capped],
    },
    {
      // Issue 18's goal is set at 200 connections.
      name: 'browsing mix at 200 connections',
      connections: 200,
      body: () => withVariables(zipfId(), 10),
      targets: ['floor', 'façade', bill[0]!, UNCACHED],
    },
  ];
}
