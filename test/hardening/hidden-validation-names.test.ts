import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// docs/operations.md: with NODE_ENV=production introspection is off and suggestions are removed, so no error names
// what the client did not write (test/hardening/hidden-schema.test.ts, entities-hidden-names.test.ts). graphql-js's
// refusal of a missing required argument names it, and its type: one request per field read every required argument
// of the schema out, introspection or not.
const production = useFacade({ NODE_ENV: 'production' });
const A = { accept: 'application/graphql-response+json' };

const messagesOf = (body: { errors: Array<{ message: string }> }) => body.errors.map((e) => e.message).join('\n');

describe('with NODE_ENV=production, a missing required argument', () => {
  it.each([
    [
      'a root field',
      '{ classificationGroup(classificationId: "E") }',
      'classificationGroup',
      ['classificationGroupId'],
    ],
    [
      'a root field missing two',
      '{ classificationGroup }',
      'classificationGroup',
      ['classificationGroupId', 'classificationId'],
    ],
    [
      'an entity field',
      '{ _entities(representations: []) { ... on ClassificationGroup { products } } }',
      'products',
      ['catalogId'],
    ],
  ])('is refused without naming it (%s)', async (_, query, field, hidden) => {
    // Twice: the second validation is Yoga's cached one.
    await production.facade.post(query, undefined, A);
    const { status, body } = await production.facade.post(query, undefined, A);
    expect(status).toBe(400);
    expect(body.errors.every((e: any) => e.extensions.code === 'GRAPHQL_VALIDATION_FAILED')).toBe(true);
    const messages = messagesOf(body);
    for (const name of hidden) expect(messages).not.toContain(`"${name}"`);
    expect(messages).not.toMatch(/"ID!"/);
    // Still says what is wrong, and on which field (the client wrote that).
    expect(messages).toContain(`Field "${field}"`);
    expect(messages).toMatch(/required argument/);
    // Said once per field, however many arguments it lacks.
    expect(body.errors).toHaveLength(1);
    expect(production.upstream.requests).toHaveLength(0);
  });
});

// The same refusals name the type a field returns, which the client did not write either.
describe('with NODE_ENV=production, a selection on a field', () => {
  it.each([
    ['a selection under a leaf', '{ catalogProducts(catalogId: "C") { name } }', /has no subfields/],
    ['no selection under an object', '{ _entities(representations: []) }', /must have a selection of subfields/],
    [
      'two fields of one response key',
      '{ _entities(representations: []) { ... on Catalog { x: products } ... on ClassificationGroup { x: classificationId } } }',
      /conflicting types/,
    ],
  ])('is refused without naming its type (%s)', async (_, query, says) => {
    const { status, body } = await production.facade.post(query, undefined, A);
    expect(status).toBe(400);
    const messages = messagesOf(body);
    expect(messages).not.toMatch(/"JSON"|_Entity|"ID!"/);
    expect(messages).toMatch(says);
  });
});
