import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
// The envelope object is one level: `levels` in all.
const envelope = (levels: number) => `{"data":${nested(levels - 1)}}`;
// "deep" answers with the nesting its id names; every other id gets a normal body.
const query = (levels: number) =>
  `{ deep: classificationGroups(classificationId: "deep-${levels}") ok: classificationGroups(classificationId: "E") }`;

let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream((req, res) => {
    const levels = /deep-(\d+)/.exec(req.url ?? '')?.[1];
    if (!levels) return faults.ok(req, res);
    res.writeHead(200, { 'content-type': 'application/json' }).end(envelope(Number(levels)));
  });
  facade = await startFacade(upstream.url, { PIM_CACHE: 'false' });
});
afterAll(async () => {
  await facade.close();
  await upstream.close();
});

describe('deeply nested upstream JSON', () => {
  it('fails only its own field past 512 levels, HTTP 200, siblings kept (4,500 arrays)', async () => {
    const { status, body } = await facade.post(query(4_500));
    expect(status).toBe(200);
    expect(body.data.deep).toBeNull();
    expect(body.data.ok.data).toEqual([{ url: '/pxm/pimapi/v1/classifications/E/groups' }]);
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: 'The catalog service sent JSON nested deeper than 512 levels',
        path: ['deep'],
        extensions: { code: 'UPSTREAM_ERROR', upstream: { status: 200 } },
      }),
    ]);
  });

  it('passes 512 levels', async () => {
    const { status, body } = await facade.post(query(512));
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(JSON.stringify(body.data.deep)).toBe(envelope(512));
  });

  it('counts brackets inside strings as text', async () => {
    upstream.respond((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 200, meta: {}, data: { text: `\\"${'['.repeat(5_000)}` } })),
    );
    const { body } = await facade.post(query(1));
    expect(body.errors).toBeUndefined();
    expect(body.data.deep.data.text).toHaveLength(5_002);
  });
});
