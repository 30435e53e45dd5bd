import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

// docs/operations.md lists the 406 among the refusals made "before GraphQL runs", and the refusal plugin's own
// contract is that "the operation never runs". The early check (src/plugins/refusal-messages.ts verdictOf) reads a
// range's charset as the parameter that *starts with* `charset=`, while Yoga's result processor
// (graphql-yoga result-processor/accept.js) takes the first parameter that *contains* `charset=`. For an Accept
// such as `application/json;xcharset=utf-8` the early check lets the request through, the operation runs and calls
// the PIM, and only then does Yoga find no processor: a late 406 whose message lists no type to accept.
it.each(['application/json;xcharset=utf-8', 'application/json;profile=charset=x'])(
  'Accept: %s is refused before the operation runs, with the types to accept',
  async (accept) => {
    fixture.upstream.reset();
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query: '{ catalogProducts(catalogId: "NOT-ACCEPTED") }' }),
    });
    const body = await response.json();
    expect(response.status).toBe(406);
    expect(body.errors[0].extensions.code).toBe('NOT_ACCEPTABLE');
    // Nothing reached the PIM for an answer no one could take.
    expect(fixture.upstream.requests).toHaveLength(0);
    // The one-line message says what to send instead.
    expect(body.errors[0].message).toMatch(/accept .*application\/json/);
  },
);
