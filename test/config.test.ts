import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, renamedSettings, settings } from '../src/config.ts';

const docs = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');

/** The configuration table (docs/configuration.md): variable name -> its "default" cell. */
function documentedSettings(): Map<string, string> {
  const rows = [...docs.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)];
  return new Map(rows.map(([, name, cell]) => [name!, cell!.trim()]));
}

/** The list of docs/configuration.md's "Renamed settings": each old name with its new one. */
function documentedRenames() {
  const section = docs.slice(docs.indexOf('## Renamed settings'));
  return [...section.matchAll(/^- `([A-Z0-9_]+)` \([^)]*\): now `([A-Z0-9_]+)`$/gm)].map(([, from, to]) => ({
    from,
    to,
  }));
}

// Values tried, in order, until one parses and changes the configuration.
const candidates = [
  '7',
  '70',
  '1100',
  // A request timeout above the headers timeout's default.
  '60000',
  '2097152',
  '1',
  'true',
  'false',
  'debug',
  'test',
  'production',
  'off',
  '/m',
  'x,y',
  'x',
  // OTEL_RESOURCE_ATTRIBUTES.
  'a=b',
];
const urlCandidates = ['http://a.example', 'redis://a.example'];

describe('loadConfig', () => {
  it('never prints a password holding / of a rejected URL setting', () => {
    expect(() => loadConfig({ REDIS_URL: 'http://default:s3cr/et+Kx==@redis:6379' })).toThrow(
      'Invalid REDIS_URL="http://default:***@redis:6379": expected',
    );
  });

  it('never prints a rejected CACHE_ADMIN_TOKEN', () => {
    expect(() => loadConfig({ CACHE_ADMIN_TOKEN: 'short-secret' })).toThrow(
      'Invalid CACHE_ADMIN_TOKEN=***: expected a token of at least 16 characters',
    );
  });

  it('never prints the password of a rejected URL setting', () => {
    expect(() => loadConfig({ PIM_BASE_URL: 'ftp://user:s3cret@host' })).toThrow(
      'Invalid PIM_BASE_URL="ftp://user:***@host": expected',
    );
  });

  it.each([
    ['a token as the user name', 'https://S3CRETTOKEN@pim.example.com', 'https://***@pim.example.com'],
    ['a key in the query', 'https://pim.example.com/?api_key=S3CRETKEY', 'https://pim.example.com/?***'],
  ])('never prints %s of a refused PIM_BASE_URL', (_, value, shown) => {
    expect(() => loadConfig({ PIM_BASE_URL: value })).toThrow(`Invalid PIM_BASE_URL="${shown}": expected`);
  });

  it.each([
    'https://tenant.example.com/pxm/pimapi/v1',
    'https://tenant.example.com/gw/pxm/pimapi/v1/',
    'https://tenant.example.com/pxm',
  ])('refuses PIM_BASE_URL=%s, the API root: every call adds /pxm/pimapi/v1 itself', (value) => {
    expect(() => loadConfig({ PIM_BASE_URL: value })).toThrow(
      `Invalid PIM_BASE_URL="${value}": expected the part of the service URL before /pxm`,
    );
  });

  it('has working defaults with an empty environment (the demo catalog)', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      pimBaseUrl: undefined,
      pim: { requestTimeoutMs: 10_000 },
      credentials: { forwardHeaders: ['x-api-key', 'authorization'] },
    });
  });

  it('documents every setting with its default in docs/configuration.md, and nothing else', () => {
    const documented = documentedSettings();
    expect([...documented.keys()].sort()).toEqual(Object.keys(settings.shape).sort());
    for (const [name, field] of Object.entries(settings.shape)) {
      const fallback = (field._zod.def as { defaultValue?: unknown }).defaultValue;
      // An empty list reads as "unset" in the table.
      if (fallback === undefined || String(fallback) === '') continue;
      expect(documented.get(name), name).toMatch(
        new RegExp(`^\`${String(fallback).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\``),
      );
    }
  });

  it('lists every renamed setting under "Renamed settings" in docs/configuration.md', () => {
    expect(documentedRenames()).toEqual(expect.arrayContaining(renamedSettings));
    expect(documentedRenames()).toHaveLength(renamedSettings.length);
  });

  it('reads every setting: a valid value other than the default changes the configuration', () => {
    // Settings that only make sense together with another get that other one here.
    const base = {
      PIM_BASE_URL: 'http://base.example',
      PERSISTED_DOCUMENTS_PATH: 'manifest.json',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example',
    };
    const defaults = JSON.stringify(loadConfig(base));
    for (const name of Object.keys(settings.shape)) {
      const tried = [...urlCandidates, ...candidates].filter((value) => {
        try {
          return JSON.stringify(loadConfig({ ...base, [name]: value })) !== defaults;
        } catch {
          return false;
        }
      });
      expect(tried, `${name} is read`).not.toEqual([]);
    }
  });

  it('reads documented variables into the configuration', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '127.0.0.1',
      PIM_BASE_URL: 'https://tenant.example.com/',
      PIM_API_KEY: 'k',
      PIM_FORWARD_HEADERS: 'X-API-KEY, X-Tenant',
      PIM_CONNECT_TIMEOUT_MS: '500',
      PIM_TIMEOUT_MS: '3000',
      PIM_MAX_CONCURRENCY: '4',
      MAX_PAGE_SIZE: '50',
      MAX_ID_LENGTH: '64',
      GRAPHQL_BATCHING: 'true',
      NODE_ENV: 'production',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      pimBaseUrl: 'https://tenant.example.com',
      credentials: { apiKey: 'k', forwardHeaders: ['x-api-key', 'x-tenant'] },
      pim: { connectTimeoutMs: 500, requestTimeoutMs: 3000, maxConcurrency: 4 },
      request: { limits: { maxPageSize: 50, maxIdLength: 64 } },
      batching: true,
    });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['PIM_BASE_URL', 'tenant.example.com'],
    ['PIM_BASE_URL', 'ftp://tenant.example.com'],
    ['PIM_TIMEOUT_MS', '0'],
    ['MAX_PAGE_SIZE', '-1'],
    ['GRAPHQL_BATCHING', 'yes please'],
  ])('refuses %s=%s with one line naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid ${name}="${value}": expected .+`));
  });
});
