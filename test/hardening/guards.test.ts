import { describe, expect, it } from 'vitest';
import { urlChecker } from '../../src/pim/rest/guards.ts';
import { PimError } from '../../src/pim/rest/errors.ts';

// The second lock behind endpoints.ts' encoding: paths that encoding never produces are refused anyway.
describe('urlChecker', () => {
  const checkedUrl = urlChecker(new URL('http://pim.internal:8080/tenant-a/'));

  it.each([
    [
      '/pxm/pimapi/v1/catalogs/c1/products/search?page=0',
      'http://pim.internal:8080/tenant-a/pxm/pimapi/v1/catalogs/c1/products/search?page=0',
    ],
    [
      '/pxm/pimapi/v1/catalogs/a%2F..%2Fb/products/search',
      'http://pim.internal:8080/tenant-a/pxm/pimapi/v1/catalogs/a%2F..%2Fb/products/search',
    ],
  ])('lets %s through', (path, url) => {
    expect(checkedUrl(path)).toBe(url);
  });

  it.each([
    ['a dot segment', '/pxm/pimapi/v1/catalogs/../../admin'],
    ['an encoded dot segment', '/pxm/pimapi/v1/%2e%2e/%2E%2E/admin'],
    ['a path outside the API prefix', '/admin/users'],
    ['a second authority', '//evil.example/pxm/pimapi/v1/catalogs'],
    ['user info', '@evil.example/pxm/pimapi/v1/catalogs'],
    ['a fragment', '/pxm/pimapi/v1/catalogs/c1#x'],
  ])('refuses %s', (_name, path) => {
    expect(() => checkedUrl(path)).toThrow(PimError);
    expect(() => checkedUrl(path)).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
  });
});
