import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// docs/operations.md, Monitoring: `graphql_errors_total{code}` counts "errors in responses by `extensions.code`, as
// clients see them", and the refusals have "a stable code by status" (405 METHOD_NOT_ALLOWED, 413 REQUEST_TOO_LARGE,
// 406 NOT_ACCEPTABLE, 415 UNSUPPORTED_MEDIA_TYPE). plugins/refusal-messages.ts gives Yoga's refusals those codes in
// onResponse, after the metrics plugin counted the result (onResultProcess): the metric counts codes no client saw
// (BAD_REQUEST), or nothing at all, while a CSRF 403 or an APQ miss is counted by its code.
const fixture = useFacade({ GRAPHQL_BATCHING: 'true' });

async function counted(): Promise<Record<string, number>> {
  const text = (await fixture.facade.get('/metrics')).text;
  return Object.fromEntries(
    [...text.matchAll(/^graphql_errors_total\{code="([^"]+)"\} (\d+)$/gm)].map(([, code, n]) => [code!, Number(n)]),
  );
}

/** What the metric added for one response, and the codes that response carried. */
async function countOf(send: () => Promise<{ status: number; body: any }>) {
  const before = await counted();
  const { status, body } = await send();
  const after = await counted();
  const added = Object.fromEntries(
    Object.entries(after)
      .filter(([code, n]) => n !== (before[code] ?? 0))
      .map(([code, n]) => [code, n - (before[code] ?? 0)]),
  );
  const seen: Record<string, number> = {};
  for (const error of body.errors) seen[error.extensions.code] = (seen[error.extensions.code] ?? 0) + 1;
  return { status, added, seen };
}

describe('graphql_errors_total counts the codes clients see', () => {
  it('a mutation over GET: 405 METHOD_NOT_ALLOWED', async () => {
    const { status, added, seen } = await countOf(() =>
      fixture.facade.get(`/graphql?query=${encodeURIComponent('mutation { x }')}`),
    );
    expect(status).toBe(405);
    expect(seen).toEqual({ METHOD_NOT_ALLOWED: 1 });
    expect(added).toEqual(seen);
  });

  it('a batch of 11 operations: 413 REQUEST_TOO_LARGE', async () => {
    const batch = Array.from({ length: 11 }, () => ({ query: '{ __typename }' }));
    const { status, added, seen } = await countOf(() => fixture.facade.postBody(batch));
    expect(status).toBe(413);
    expect(seen).toEqual({ REQUEST_TOO_LARGE: 1 });
    expect(added).toEqual(seen);
  });

  it('a POST an HTML form can send: 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const { status, added, seen } = await countOf(() =>
      fixture.facade.request('/graphql', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }),
    );
    expect(status).toBe(415);
    expect(seen).toEqual({ UNSUPPORTED_MEDIA_TYPE: 1 });
    expect(added).toEqual(seen);
  });
});
