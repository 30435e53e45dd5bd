import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// UPSTREAM.md: every success is the `{status, meta, data}` envelope; README/integration.md: a field's value is that
// body "envelope included", and src/types/catalog.ts's catalogResult throws a TypeError for anything else. A 404 is
// judged the PIM's only when its object carries a member of the envelope (rest/errors.ts isErrorEnvelope: a gateway's
// own JSON is "a page"), but a 2xx is judged by object-ness alone: a maintenance/gateway JSON object under 200 (or `{}`)
// becomes the field's data with no error, is cached as a fresh answer and kept as last-known-good.
const servers = closedAfterEach();
const env = { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' };
const json = { 'content-type': 'application/json' };

it.each([
  ['a gateway/maintenance JSON object', '{"message":"Service in maintenance, retry later"}'],
  ['an empty object', '{}'],
])('a 2xx whose JSON is %s (no status, meta or data) is UPSTREAM_ERROR, not data', async (_name, text) => {
  const { facade, upstream } = await servers.start(
    (_req, res) => res.writeHead(200, { ...json, 'cache-control': 'max-age=60' }).end(text),
    env,
  );
  const { body } = await facade.post('{ classificationGroups(classificationId: "C") }');
  expect(upstream.requests).toHaveLength(1);
  expect(body.data).toEqual({ classificationGroups: null });
  expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: { status: 200 } });
});
