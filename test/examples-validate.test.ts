import { readdirSync, readFileSync } from 'node:fs';
import { buildSchema, parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from './helpers/demo.ts';
import { startFacade } from './helpers/facade.ts';

const root = new URL('../', import.meta.url);
const committed = buildSchema(readFileSync(new URL('schema.graphql', root), 'utf8'));
const examples = readdirSync(new URL('examples/', root)).filter((file) => file.endsWith('.graphql'));

// README: "`npm run codegen` writes `schema.graphql` and types `examples/`"; docs/integration.md lets a frontend
// generate its types against "the running service's schema ... or the committed `schema.graphql`". A GraphQL IDE,
// linter or client validating against that file must accept the repository's own examples, @defer included.
describe('examples/*.graphql against the committed schema.graphql', () => {
  it.each(examples)('%s validates', (file) => {
    const document = parse(readFileSync(new URL(`examples/${file}`, root), 'utf8'));
    expect(validate(committed, document).map((error) => error.message)).toEqual([]);
  });
});

describe('the committed schema.graphql and the served schema', () => {
  let demo: Awaited<ReturnType<typeof startDemo>>;
  let facade: Awaited<ReturnType<typeof startFacade>>;
  beforeAll(async () => {
    demo = await startDemo();
    facade = await startFacade(demo.url, { LOG_LEVEL: 'silent' });
  });
  afterAll(async () => {
    await facade?.close();
    await demo?.close();
  });

  it('declare the same directives (introspection of the running server is the other codegen source)', async () => {
    const answer = await facade.post('{ __schema { directives { name } } }');
    const served = (answer.body.data.__schema.directives as Array<{ name: string }>).map((d) => d.name).sort();
    expect(
      committed
        .getDirectives()
        .map((d) => d.name)
        .sort(),
    ).toEqual(served);
  });
});
