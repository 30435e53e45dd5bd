import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.ts';
import { useFacade } from '../helpers/facade.ts';

// docs/operations.md, Monitoring: the table of metrics an operator builds dashboards and alerts from. Every row's
// names and labels are what a scrape carries, and every metric of the app (besides Node's process_*/nodejs_*) has a row.
const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const table = operations.slice(
  operations.indexOf('| metric | labels | what |'),
  operations.indexOf('plus Node.js process metrics'),
);
const rows = table
  .split('\n')
  .filter((line) => line.startsWith('| `'))
  .map((line) => line.split(' | '))
  .map(([names = '', labels = '']) => ({
    names: [...names.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name!),
    labels: [...labels.matchAll(/`([a-z_]+)`/g)].map(([, label]) => label!).sort(),
  }));
const documented = new Map(rows.flatMap(({ names, labels }) => names.map((name) => [name, labels] as const)));
const ownMetric = (name: string) => !name.startsWith('process_') && !name.startsWith('nodejs_');

const fixture = useFacade({ PIM_CACHE: 'false' });

describe('docs/operations.md metric table', () => {
  it('lists exactly the metric names a scrape of /metrics carries', async () => {
    await fixture.facade.post('query Counted { catalogProducts(catalogId: "MACHINERY") }');
    const text = await (await fetch(`${fixture.facade.origin}/metrics`)).text();
    const scraped = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name]) => name!).filter(ownMetric);
    expect(documented.size).toBeGreaterThan(10);
    expect([...scraped].sort()).toEqual([...documented.keys()].sort());
  });

  it('gives each metric the labels its row names, and units and types by the naming conventions', () => {
    const metrics = createMetrics().registry.getMetricsAsArray() as any[];
    for (const { name, type, labelNames } of metrics.filter((m) => ownMetric(m.name))) {
      expect([name, [...(labelNames ?? [])].sort()]).toEqual([name, documented.get(name)]);
      if (type === 'counter') expect(name).toMatch(/_total$/);
      else expect(name).not.toMatch(/_total$/);
      if (type === 'histogram') expect(name).toMatch(/_seconds$|_bytes$/);
    }
  });
});
