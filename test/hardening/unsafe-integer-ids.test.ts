import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// An entity's key may be sent as an integer (taken as its digits, as an ID argument's). Past Number.MAX_SAFE_INTEGER
// the integer has no exact JavaScript value once JSON is parsed: String() of it is another number, or exponent
// notation, never the digits sent. The id the PIM is asked for was then one the client never named
// (`1.2345678901234568e+29`), where it should be refused before any call, as every other id the interface cannot
// carry is (BAD_USER_INPUT, nothing sent). (An ID *variable* sent so is refused before the operation runs:
// test/hardening/id-variable-precision.test.ts.)
const fixture = useFacade();

const digits = '123456789012345678901234567890';

/** Refused with BAD_USER_INPUT and nothing sent, or sent with exactly the digits the client wrote. */
function refusedOrExact(body: any) {
  const sent = fixture.upstream.requests.map((r) => r.url);
  if (sent.length === 0) {
    expect(body.errors?.map((e: any) => e.extensions?.code)).toContain('BAD_USER_INPUT');
  } else {
    expect(sent).toEqual([`/pxm/pimapi/v1/catalogs/${digits}/products/search`]);
  }
}

describe('an integer id past the safe range', () => {
  it('in an entity representation is not sent upstream as another id', async () => {
    const { body } = await fixture.facade.post(
      `{ _entities(representations: [{__typename: "Catalog", catalogId: ${digits}}]) { ... on Catalog { products } } }`,
    );
    refusedOrExact(body);
  });
});
