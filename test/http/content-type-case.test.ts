import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

// A media type's type and subtype are case-insensitive, and whitespace may stand around a parameter's `;` (RFC 9110
// §8.3.1, §5.6.6). Yoga matches `application/json` by its exact spelling: a client writing it otherwise got a 415.
it.each(['Application/JSON', 'APPLICATION/JSON; charset=utf-8', 'application/json ; charset=UTF-8'])(
  'a POST of Content-Type: %s is read as JSON',
  async (type) => {
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': type },
      body: JSON.stringify({ query: '{ catalogProducts(catalogId: "CASE") }' }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await response.json()).data).toHaveProperty('catalogProducts');
  },
);
