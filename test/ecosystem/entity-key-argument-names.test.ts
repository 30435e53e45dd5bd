import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// A ClassificationGroup entity's `products` fills catalogProducts' `classificationGroupClassificationId` from the key
// field `classificationId`. Its refusals named that argument, which the client (a gateway) never wrote and which, with
// NODE_ENV=production, the schema hides: `group` on the same representation named the key field it was given.
const notFound = (_req: IncomingMessage, res: ServerResponse) =>
  void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404,"error":"No Products found"}');
const fixture = useFacade({ NODE_ENV: 'production', PIM_CACHE: 'false' });

const entity = (classificationId: string) =>
  `{ _entities(representations: [{ __typename: "ClassificationGroup", classificationGroupId: "G", classificationId: ${JSON.stringify(classificationId)} }]) { ... on ClassificationGroup { group products(catalogId: "C") } } }`;

describe('a ClassificationGroup entity whose products field is refused', () => {
  it('names the key field it was given, as its group field does, when the key is refused', async () => {
    const { body } = await fixture.facade.post(entity('E\u0001'));
    const [group, products] = body.errors;
    expect(group.path).toEqual(['_entities', 0, 'group']);
    expect(products.path).toEqual(['_entities', 0, 'products']);
    expect(products.extensions.code).toBe('BAD_USER_INPUT');
    expect(products.message).not.toContain('classificationGroupClassificationId');
    expect(products.message).toBe(group.message);
    expect(fixture.upstream.requests).toHaveLength(0);
  });

  it('names only what the client wrote when the PIM finds nothing', async () => {
    fixture.upstream.respond(notFound);
    const { body } = await fixture.facade.post(entity('E'));
    const products = body.errors.find((e: any) => e.path.at(-1) === 'products');
    expect(products.extensions.code).toBe('NOT_FOUND');
    expect(products.message).not.toContain('classificationGroupClassificationId');
    expect(products.message).toBe('No Products found: catalogId "C", classificationGroupId "G", classificationId "E"');
  });
});
