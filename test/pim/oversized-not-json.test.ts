import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// A PIM that answers every call well, but one caller asks for a page larger than PIM_MAX_BODY_BYTES: a valid JSON
// envelope of 200 KB, with the limit at 64 KiB. The field fails with UPSTREAM_ERROR (docs/operations.md: "An
// upstream body over PIM_MAX_BODY_BYTES is UPSTREAM_ERROR and its connection is closed rather than read"): the
// caller's own page, read by no one. docs/operations.md (Readiness) counts as `not_json` only "a 2xx that is not
// JSON, or JSON but not the envelope object (a maintenance page, a login page of a proxy, a bare null)", logged
// `Upstream answers 2xx with a body that is not JSON`: an operator's alarm that the PIM is misconfigured or in
// maintenance. One caller's large page raises it, and the PIM's well-formed small pages then log "JSON again".
it('a body over PIM_MAX_BODY_BYTES is not counted or logged as the PIM answering something other than JSON', async () => {
  const big: UpstreamHandler = (req, res) => {
    const pad = req.url?.includes('/big') ? 'x'.repeat(200_000) : '';
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: 200, meta: {}, data: [{ pad }] }));
  };
  const { logger, lines } = captureLogs('info');
  const { facade } = await servers.start(big, { PIM_MAX_BODY_BYTES: '65536', PIM_CACHE: 'false' }, { logger });
  const answer = await facade.post('{ classificationGroups(classificationId: "big") }');
  expect(answer.body.errors?.[0]?.extensions.code).toBe('UPSTREAM_ERROR');
  const small = await facade.post('{ classificationGroups(classificationId: "small") }');
  expect(small.body.errors).toBeUndefined();
  const metrics = (await facade.get('/metrics')).text;
  const notJson = /^pim_upstream_faults_total\{fault="not_json"\} (\d+)$/m.exec(metrics)?.[1] ?? '0';
  const warned = lines.filter((line) => /not JSON/.test(String(line.msg))).map((line) => line.msg);
  expect({ notJson, warned }).toEqual({ notJson: '0', warned: [] });
});
