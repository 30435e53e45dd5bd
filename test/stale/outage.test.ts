import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { answerFor, idOf, operations } from './reads.ts';

// Credential A reads 0-99, B reads 50-149: 200 distinct reads, half of them URLs both saw.
const credentials = { A: { key: 'key-of-a-123', from: 0, to: 100 }, B: { key: 'key-of-b-456', from: 50, to: 150 } };
const BUDGET_MS = 5_000;
const outageCodes = ['UPSTREAM_ERROR', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT', 'BUDGET_EXCEEDED'];
const hang = (_req: IncomingMessage, _res: ServerResponse) => undefined;

describe('last-known-good: an outage of the PIM after two credentials read 200 distinct URLs', () => {
  let upstream: Upstream;
  let facade: Facade;
  beforeAll(async () => {
    upstream = await startUpstream(answerFor('v1'));
    facade = await startFacade(upstream.url, {
      PIM_TIMEOUT_MS: '300',
      PIM_BREAKER_HALF_OPEN_MS: '200',
      GRAPHQL_BUDGET_MS: String(BUDGET_MS),
    });
  });
  afterAll(async () => {
    await facade?.close();
    await upstream?.close();
  });

  /** Sends every read of `name` and returns each field's answer and the stale list, timing each operation. */
  async function readAll(name: keyof typeof credentials) {
    const { key, from, to } = credentials[name];
    const fields: Record<string, any> = {};
    const stale: any[] = [];
    for (const query of operations(from, to)) {
      const started = Date.now();
      const { status, body, headers } = await facade.post(query, {}, { 'x-api-key': key });
      expect(Date.now() - started).toBeLessThan(BUDGET_MS);
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      Object.assign(fields, body.data);
      stale.push(...(body.extensions?.stale ?? []));
      if (body.extensions?.stale) {
        expect(headers.get('cache-control')).toMatch(/no-store/);
        expect(Number(headers.get('age'))).toBeGreaterThanOrEqual(0);
      }
    }
    return { fields, stale };
  }

  /** Waits until the PIM answers again (the breaker's probe passes); bounded polling, no fixed sleep. */
  async function untilFresh() {
    for (let i = 0; i < 100; i++) {
      const { body } = await facade.post(
        '{ r0: catalogProducts(catalogId: "C0") }',
        {},
        { 'x-api-key': 'key-of-a-123' },
      );
      if (!body.extensions?.stale) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the façade kept answering stale after the PIM came back');
  }

  /** Every read of both credentials answered with its own v1 data, each field listed stale; returns the reasons. */
  async function expectStaleEverywhere() {
    const reasons = new Set<string>();
    for (const name of ['A', 'B'] as const) {
      const { key, from, to } = credentials[name];
      const { fields, stale } = await readAll(name);
      expect(stale).toHaveLength(to - from);
      for (let i = from; i < to; i++) {
        const [item] = fields[`r${i}`].data;
        expect(item).toMatchObject({ key: name, version: 'v1' });
        expect(item.url).toContain(`/${idOf(i)}`);
      }
      for (const field of stale) {
        expect(field.path).toHaveLength(1);
        expect(outageCodes).toContain(field.reason);
        expect(field.age).toBeGreaterThanOrEqual(0);
        reasons.add(field.reason);
      }
    }
    return reasons;
  }

  /** A read only the other credential saw gets the usual error, never the other's data. */
  async function expectUnseenFails() {
    const { body } = await facade.post(
      '{ a: catalogProducts(catalogId: "C120") }',
      {},
      { 'x-api-key': 'key-of-a-123' },
    );
    expect(body.data.a).toBeNull();
    expect(outageCodes).toContain(body.errors[0].extensions.code);
    expect(body.extensions?.stale).toBeUndefined();
  }

  it('warms: every read answered fresh from the PIM', async () => {
    for (const name of ['A', 'B'] as const) expect((await readAll(name)).stale).toEqual([]);
    expect(upstream.requests).toHaveLength(200);
  });

  it('(a) the PIM answers 500: every read seen is answered with its old data, marked stale', async () => {
    upstream.respond(faults.status(500, '{"error":"down"}'));
    await expectStaleEverywhere();
    await expectUnseenFails();
  });

  it('(b) the PIM refuses connections: the same', async () => {
    const { port } = upstream;
    await upstream.close();
    await expectStaleEverywhere();
    await expectUnseenFails();
    upstream = await startUpstream(hang, port);
  });

  it('(c) the PIM accepts and never answers: the same, within the budget', async () => {
    await expectStaleEverywhere();
    await expectUnseenFails();
  });

  it('fresh answers replace the stale ones when the PIM is back', async () => {
    upstream.respond(answerFor('v2'));
    // The breaker lets a probe through after its half-open delay.
    await untilFresh();
    for (const name of ['A', 'B'] as const) {
      const { fields, stale } = await readAll(name);
      expect(stale).toEqual([]);
      for (const field of Object.values(fields)) expect(field.data[0]).toMatchObject({ version: 'v2', key: name });
    }
  });
});
