import { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { createSend } from '../../src/pim/steps/send.ts';
import { createByteLimits } from '../../src/pim/rest/byte-limits.ts';

// A network failure the socket reports by errno: loopback cannot make these (a DNS server failing, a route going
// down, a peer gone silent under TCP keep-alive), so the innermost step is given a dispatcher that fails the call
// with one. README, Errors: a connection refused or reset, or a DNS failure, is UPSTREAM_UNAVAILABLE, which the
// retry step retries and a kept copy stands in for; UPSTREAM_ERROR says the PIM answered something wrong.
class Failing extends Dispatcher {
  readonly code: string;
  constructor(code: string) {
    super();
    this.code = code;
  }
  override dispatch(_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const error = Object.assign(new Error(`${this.code} (the socket's)`), { code: this.code });
    queueMicrotask(() => handler.onResponseError?.({} as never, error));
    return true;
  }
}

describe('a call failing with a network errno', () => {
  it.each(['ECONNREFUSED', 'ENOTFOUND', 'EAI_FAIL', 'ETIMEDOUT', 'ENETDOWN', 'ECONNABORTED', 'EHOSTDOWN'])(
    '%s is UPSTREAM_UNAVAILABLE',
    async (code) => {
      const send = createSend({
        base: new URL('http://pim.invalid/'),
        dispatcher: new Failing(code),
        maxBodyBytes: 1_024,
        secretsOf: () => [],
      });
      const bytes = createByteLimits({
        maxRequestBytes: 1_024,
        maxInflightBytes: 1_024,
        maxInflightBytesPerCredential: 1_024,
      }).open('a');
      const call = send(
        { path: '/pxm/pimapi/v1/catalogs/A/products/search', operation: 'catalogProducts' } as never,
        {
          headers: {},
          bytes,
        } as never,
      );
      await expect(call).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    },
  );
});
