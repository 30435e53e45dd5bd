import { expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

const fixture = useFacade();

const operation = '{ catalogProducts(catalogId: "FORM") }';
const multipart = [
  '--b',
  'Content-Disposition: form-data; name="operations"',
  '',
  JSON.stringify({ query: operation }),
  '--b',
  'Content-Disposition: form-data; name="map"',
  '',
  '{}',
  '--b--',
  '',
].join('\r\n');

// docs/operations.md: "POST as text/plain, application/x-www-form-urlencoded or multipart/form-data (what an HTML
// form can send) ... 415". src/plugins/security.ts takes the type as everything before the first `;`, so a content
// type that lists one of them first (`application/x-www-form-urlencoded, application/json`) is no form type to it,
// while Yoga's request parsers (isContentTypeMatch: the first entry of a comma-separated list) read the body as that
// very form type and execute it, PIM call included.
it.each([
  ['application/x-www-form-urlencoded, application/json', `query=${encodeURIComponent(operation)}`],
  ['multipart/form-data, x; boundary=b', multipart],
])('POST as %s is refused with 415 and nothing upstream', async (type, body) => {
  fixture.upstream.reset();
  const response = await fetch(fixture.facade.url, { method: 'POST', headers: { 'content-type': type }, body });
  const answer = await response.json();
  expect([response.status, answer.errors?.[0]?.extensions?.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
  expect(fixture.upstream.requests).toHaveLength(0);
});
