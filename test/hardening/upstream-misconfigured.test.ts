import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo, faults, type UpstreamHandler } from '../helpers/upstream.ts';

const SERVER_KEY = 'server-key-0123456789';
const CALLER_KEY = 'caller-key-0123456789';
const query = (id: string) => `{ catalogProducts(catalogId: "${id}") }`;

const servers = closedAfterEach();

/** A PIM that knows only the caller's key: the façade's own key has been revoked. */
const callerKeyOnly: UpstreamHandler = (req, res) =>
  req.headers['x-api-key'] === CALLER_KEY ? echo(req, res) : faults.status(401, '{"error":"bad key"}')(req, res);

/**
 * An upstream answering with `handler`, and the façade logging at info, READINESS_MAX_AGE_MS small
 * enough that each check probes.
 */
async function start(handler: UpstreamHandler, env: Record<string, string> = {}) {
  const { logger, lines, raw } = captureLogs('info');
  const { upstream, facade } = await servers.start(
    handler,
    { READINESS_MAX_AGE_MS: '100', PIM_RETRIES: '0', ...env },
    { logger },
  );
  const faultCount = async (fault: string) => {
    const text = (await facade.get('/metrics')).text;
    return Number(new RegExp(`^pim_upstream_faults_total\\{fault="${fault}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  };
  return { upstream, facade, lines, raw, faultCount };
}

describe('the PIM refusing PIM_API_KEY', () => {
  it('tells keyless callers the façade’s own credentials were refused, warns once, and is not ready', async () => {
    const { upstream, facade, lines, raw, faultCount } = await start(callerKeyOnly, { PIM_API_KEY: SERVER_KEY });
    for (let i = 0; i < 5; i++) {
      const { body } = await facade.post(query(`anonymous-${i}`));
      expect(body.errors[0].extensions.code).toBe('SERVER_CREDENTIALS_REJECTED');
      expect(body.errors[0].message).toMatch(/own credentials/);
    }
    // A caller with its own key is served; a caller whose own key is refused is told so, as before.
    expect((await facade.post(query('keyed'), {}, { 'x-api-key': CALLER_KEY })).body.errors).toBeUndefined();
    const wrong = await facade.post(query('wrong'), {}, { 'x-api-key': 'not-a-key-000' });
    expect(wrong.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    expect((await facade.get('/readiness')).status).toBe(503);
    const warned = lines.filter((l) => l.level === 40 && /server key/i.test(l.msg));
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toMatch(/PIM_API_KEY/);
    expect(raw.join('')).not.toContain(SERVER_KEY);
    expect(await faultCount('server_key_refused')).toBeGreaterThanOrEqual(5);

    // The key is valid again: ready again, with no restart.
    upstream.respond(echo);
    await expect.poll(async () => (await facade.get('/readiness')).status, { timeout: 5_000 }).toBe(200);
    expect((await facade.post(query('anonymous-again'))).body.errors).toBeUndefined();
  });
});

describe('a PIM answering every call with a 200 HTML page (maintenance, a proxy)', () => {
  it('warns once, counts it, and is not ready', async () => {
    const maintenance: UpstreamHandler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Down for maintenance</body></html>');
    const { upstream, facade, lines, faultCount } = await start(maintenance);
    for (let i = 0; i < 5; i++) {
      const { body } = await facade.post(query(`page-${i}`));
      expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
    }
    expect((await facade.get('/readiness')).status).toBe(503);
    const warned = lines.filter((l) => l.level === 40 && /not JSON/i.test(l.msg));
    expect(warned).toHaveLength(1);
    expect(await faultCount('not_json')).toBeGreaterThanOrEqual(5);

    upstream.respond(echo);
    await expect.poll(async () => (await facade.get('/readiness')).status, { timeout: 5_000 }).toBe(200);
  });
});
