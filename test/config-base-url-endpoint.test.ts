import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startDemo } from './helpers/demo.ts';
import { startFacade, type Facade } from './helpers/facade.ts';

// config.ts refuses "the API root pasted whole" because every call would then go to /pxm/pimapi/v1/pxm/pimapi/v1/…:
// "every field NOT_FOUND, and readiness content with the 404 its probe expects". A newcomer pasting an endpoint URL
// from the REST documentation (the API root plus a resource path) makes the same mistake and is let through.
const pasted = [
  'https://tenant.example.com/pxm/pimapi/v1/classifications/ECLASS-DEMO/groups',
  'https://tenant.example.com/pxm/pimapi/v1/catalogs',
];

describe('PIM_BASE_URL holding the API root followed by a resource path', () => {
  it.each(pasted)('%s is refused at start like the bare API root', (value) => {
    expect(() => loadConfig({ PIM_BASE_URL: value })).toThrow(ConfigError);
  });

  let stop: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const s of stop.reverse()) await s();
    stop = [];
  });

  // What the mistake costs, against the bundled demo as the PIM: the server starts, says it is ready, and every
  // field is a NOT_FOUND that blames the caller's ids. The fix refuses the setting, so this server never starts.
  it('is not accepted only to answer every field NOT_FOUND while /readiness says ready', async () => {
    const demo = await startDemo();
    stop.push(demo.close);
    const base = `${demo.url}/pxm/pimapi/v1/classifications`;
    let facade: Facade | undefined;
    try {
      facade = await startFacade(base);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return;
    }
    stop.push(facade.close);
    const ready = await facade.get('/readiness');
    const answer = await facade.post('{ classificationGroups(classificationId: "ECLASS-DEMO", pageSize: 1) }');
    expect({
      readiness: ready.status,
      code: answer.body.errors?.[0]?.extensions?.code,
      message: answer.body.errors?.[0]?.message,
    }).toEqual({ readiness: 503, code: expect.not.stringMatching(/^NOT_FOUND$/), message: expect.any(String) });
  });
});
