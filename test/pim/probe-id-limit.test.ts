import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// MAX_ID_LENGTH is valid from 1: an operator whose ids are short (ECLASS codes, "27-01-02") may set it to 12. The
// readiness probe's own made-up id ("readiness-probe", 15 characters) is no caller's input and must not be held to it.
describe('MAX_ID_LENGTH below the probe id length', () => {
  it('starts, serves ids within the limit and answers readiness', async () => {
    const { upstream, facade } = await servers.start(echo, { MAX_ID_LENGTH: '12', LOG_LEVEL: 'silent' });
    const { body } = await facade.post('{ classificationGroups(classificationId: "ECLASS") }');
    expect(body.errors).toBeUndefined();
    const tooLong = await facade.post('{ classificationGroups(classificationId: "ECLASS-123456") }');
    expect(tooLong.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await facade.get('/readiness')).status).toBe(200);
    expect(upstream.requests.some((r) => r.url.includes('/classifications/readiness-probe/'))).toBe(true);
  });
});
