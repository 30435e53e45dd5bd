import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// A hit must answer as executing would. An operation with a @defer the refusal of refusal-messages.ts takes as
// streaming is refused with 406 to a client that accepts no stream; its onExecute runs after the cache of results'
// (yoga.ts), so once a client that accepts streams filled the entry (the deferred fragment never ran: no entity),
// the same request that got 406 before got 200 and the data.
const fixture = useFacade({ RESPONSE_CACHE_MAX_BYTES: '1048576' }, cacheableEcho(60));
const query =
  'query Q($r: [_Any!]!) { catalogProducts(catalogId: "e") _entities(representations: $r) { ... on Catalog { ... @defer { catalogId } } } }';
const send = (accept: string) =>
  fixture.facade.request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'alice', accept },
    body: JSON.stringify({ query, variables: { r: [] } }),
  });

describe('a hit of the cache of results and the refusal of a stream nobody accepts', () => {
  it('answers as a miss does: 406 before and after another client filled the entry', async () => {
    const before = await send('application/json');
    expect(before.status).toBe(406);
    const filled = await send('multipart/mixed, application/json');
    expect(filled.status).toBe(200);
    const after = await send('application/json');
    expect({ status: after.status, body: after.body }).toEqual({ status: before.status, body: before.body });
  });
});
