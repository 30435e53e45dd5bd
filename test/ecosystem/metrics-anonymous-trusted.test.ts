import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

// docs/operations.md, Monitoring: "only the first 100 distinct ones ... become label values (with a trusted-document
// manifest loaded, only its names); others count as `other`, and one without a name as `anonymous`". With a
// manifest loaded, an operation without a name was counted as `other`: one series mixing every unnamed trusted
// document with the invented names the label bound is there to lump together.
const { start } = closedAfterEach();
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('operation_name label with a trusted-document manifest', () => {
  it('labels an operation without a name `anonymous`, not `other`', async () => {
    const anonymous = '{ catalogProducts(catalogId: "A") }';
    const named = 'query Named { catalogProducts(catalogId: "B") }';
    const dir = mkdtempSync(join(tmpdir(), 'obs-manifest-'));
    dirs.push(dir);
    const path = join(dir, 'manifest.json');
    writeFileSync(
      path,
      JSON.stringify({ [`sha256:${sha256(anonymous)}`]: anonymous, [`sha256:${sha256(named)}`]: named }),
    );
    const { facade } = await start(echo, {
      PIM_CACHE: 'false',
      PERSISTED_DOCUMENTS_PATH: path,
      PERSISTED_DOCUMENTS_ONLY: 'true',
    });

    const trusted = await fetch(`${facade.url}?documentId=sha256:${sha256(anonymous)}`);
    expect(trusted.status).toBe(200);
    expect((await trusted.json()).errors).toBeUndefined();
    const namedOne = await fetch(`${facade.url}?documentId=sha256:${sha256(named)}`);
    expect(namedOne.status).toBe(200);

    const text = await (await fetch(`${facade.origin}/metrics`)).text();
    const series = text.split('\n').filter((l) => l.startsWith('graphql_operations_total{'));
    expect(series.sort()).toEqual([
      'graphql_operations_total{operation_type="query",operation_name="Named"} 1',
      'graphql_operations_total{operation_type="query",operation_name="anonymous"} 1',
    ]);
  });
});
