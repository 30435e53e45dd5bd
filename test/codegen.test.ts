import { readFileSync } from 'node:fs';
import { generate } from '@graphql-codegen/cli';
import { expect, it } from 'vitest';
import config from '../codegen.ts';

it('the committed generated files are what `npm run codegen` writes', async () => {
  // Typed by hand: generate()'s return type degrades to any (its watch-mode overload).
  const outputs: Array<{ filename: string; content: string }> = await generate(
    { ...config, cwd: new URL('..', import.meta.url).pathname, silent: true },
    false,
  );
  const files = outputs.map((output) => output.filename).sort();
  expect(files).toContain('examples/gql/persisted-documents.json');
  for (const { filename, content } of outputs) {
    expect(readFileSync(new URL(`../${filename}`, import.meta.url), 'utf8'), filename).toBe(content);
  }
});
