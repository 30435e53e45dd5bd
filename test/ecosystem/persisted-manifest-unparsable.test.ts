import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/process.ts';

// A manifest entry whose id is the SHA-256 of its text, but whose text is not a GraphQL document (a truncated copy, a
// hand edit). Every other bad manifest stops the start with one line naming PERSISTED_DOCUMENTS_PATH (a ConfigError);
// this one threw graphql-js's GraphQLError out of loadManifest: a stack trace on stderr, no word of which setting.
const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('a trusted-document manifest holding a document that does not parse', () => {
  it('stops the start with one line naming the setting and the entry', async () => {
    const broken = 'query Broken { catalogProducts(catalogId: "A")';
    const path = join(dir, 'manifest.json');
    writeFileSync(path, JSON.stringify({ [`sha256:${sha256(broken)}`]: broken }));
    const { code, stderr } = await runProcess(process.execPath, ['src/main.ts'], {
      env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: '', PERSISTED_DOCUMENTS_PATH: path },
    });
    expect(code).toBe(1);
    expect(stderr).toEqual([
      expect.stringMatching(/^PERSISTED_DOCUMENTS_PATH .*manifest\.json: entry sha256:[0-9a-f]{64} /),
    ]);
  });
});
