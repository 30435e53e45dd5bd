import { cruise } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

// Type-only imports count: a cycle of types still ties the modules together for a reader.
async function violations(forbidden: object[]) {
  const result = await cruise(['src'], {
    validate: true,
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    ruleSet: { forbidden } as never,
  });
  const { summary } = result.output as {
    summary: { violations: Array<{ from: string; to: string; cycle?: Array<{ name: string }> }> };
  };
  return summary.violations.map((v) =>
    v.cycle ? [v.from, ...v.cycle.map((step) => step.name)].join(' -> ') : `${v.from} -> ${v.to}`,
  );
}

describe('module structure', () => {
  it('has no import cycles, type-only imports included', async () => {
    expect(await violations([{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }])).toEqual(
      [],
    );
  });

  // Type-only imports count here too: a folder below never names a type of the one above.
  it.each([
    [
      'the HTTP client folder below GraphQL: src/pim imports neither graphql nor the layers above it',
      '^src/pim/',
      '^src/(schema|plugins|http|app\\.ts|context\\.ts|errors\\.ts)|^node_modules/graphql/',
    ],
    [
      'the Yoga plugins below what wires them: src/plugins imports neither observability nor the context',
      '^src/plugins/',
      '^src/(observability/|context\\.ts|app\\.ts)',
    ],
    // src/pim by role, bottom up: rest/ (endpoints, answers), then admission/ and cache/, then steps/ of the
    // call, then the files at its top that compose them (client.ts, pipeline.ts, loaders.ts).
    [
      'the REST endpoints and answers at the bottom of src/pim: rest/ imports no other part of it',
      '^src/pim/rest/',
      '^src/pim/(?!rest/)',
    ],
    [
      'admission below the steps: src/pim/admission imports only rest/',
      '^src/pim/admission/',
      '^src/pim/(?!rest/|admission/)',
    ],
    ['the caches below the steps: src/pim/cache imports only rest/', '^src/pim/cache/', '^src/pim/(?!rest/|cache/)'],
    [
      'the steps below what composes them: src/pim/steps imports no file at the top of src/pim',
      '^src/pim/steps/',
      '^src/pim/[^/]+$',
    ],
  ])('keeps %s', async (_name, from, above) => {
    const rule = { name: 'layers', severity: 'error', from: { path: from }, to: { path: above } };
    expect(await violations([rule])).toEqual([]);
  });
});
