import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from './helpers/demo.ts';
import { startFacade, type Facade } from './helpers/facade.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
// Each README example is a ```graphql block followed by the ```json block of its output.
const examples = [...readme.matchAll(/```graphql\n([\s\S]*?)```\s*```json\n([\s\S]*?)```/g)].map((m) => ({
  query: m[1]!.trim(),
  output: JSON.parse(m[2]!),
}));

let demo: Awaited<ReturnType<typeof startDemo>>;
let app: Facade;

beforeAll(async () => {
  demo = await startDemo();
  app = await startFacade(demo.url);
});
afterAll(async () => {
  await app.close();
  await demo.close();
});

describe('README examples', () => {
  it('shows one example per field', () => {
    expect(examples.map((e) => Object.keys(e.output.data)[0])).toEqual([
      'catalogProducts',
      'classificationGroup',
      'classificationGroups',
    ]);
  });

  it.each(examples)('$query returns the output shown', async ({ query, output }) => {
    const { body } = await app.post(query);
    // The demo's paging links carry its own origin, a free port: the README names it <demo-port>.
    const shown = JSON.parse(JSON.stringify(body).replaceAll(demo.url, 'http://127.0.0.1:<demo-port>'));
    expect(shown).toEqual(output);
  });
});

describe('documentation links', () => {
  const documents = [
    'README.md',
    'docs/configuration.md',
    'docs/operations.md',
    'docs/integration.md',
    'bench/README.md',
    'src/demo/README.md',
  ];
  it.each(documents)('%s links only to files in the repository', (document) => {
    const at = new URL(`../${document}`, import.meta.url);
    const targets = [...readFileSync(at, 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    const missing = targets.filter((target) => !/^[a-z]+:/.test(target) && !existsSync(new URL(target, at)));
    expect(missing).toEqual([]);
  });
});
