import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

// docs/configuration.md: "A bad value or an unsafe combination stops the process with one line naming the setting".
// Each of these started, and did something nobody asked for.
describe('a numeric setting whose value is only whitespace (a templated YAML or .env line)', () => {
  it.each([
    ['PORT', (c: any) => c.port, 4000],
    ['PIM_RETRIES', (c: any) => c.pim.resilience.retries, 2],
    ['SHUTDOWN_GRACE_MS', (c: any) => c.http.shutdownGraceMs, 10_000],
    ['PIM_STALE_IF_ERROR_MS', (c: any) => c.pim.stale.staleIfErrorMs, 86_400_000],
  ])('%s=" " is unset (its default), as an empty one is, not 0', (name, read, fallback) => {
    expect(read(loadConfig({ [name]: ' ' }))).toBe(fallback);
  });
});

// Number() reads hexadecimal and exponents: `PORT=0x10` listened on 16, `SHUTDOWN_GRACE_MS=1e4` waited 10 s.
describe('a numeric setting not written in decimal digits', () => {
  it.each([
    ['PORT', '0x10'],
    ['SHUTDOWN_GRACE_MS', '1e4'],
    ['PIM_RETRIES', '0b1'],
    ['PIM_TIMEOUT_MS', '2000.0'],
    ['HTTP_MAX_IN_FLIGHT', 'Infinity'],
  ])('%s=%s is refused, naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`Invalid ${name}=.*an integer from`));
  });

  it('takes decimal digits, with spaces or a + around them', () => {
    expect(loadConfig({ PORT: ' 8080 ', SHUTDOWN_GRACE_MS: '+10000' })).toMatchObject({
      port: 8080,
      http: { shutdownGraceMs: 10_000 },
    });
  });
});

// Nothing reads a REDIS_URL's query: `?password=` or `?tls=true` started without them, and failed at the first command.
describe('REDIS_URL with a query or fragment', () => {
  it.each([
    'redis://redis:6379/0?password=secret-pw',
    'redis://redis:6379?tls=true',
    'redis://redis:6379/0#x',
    'redis://redis:6379?',
  ])('%s is refused, without the query in the line', (url) => {
    expect(() => loadConfig({ REDIS_URL: url })).toThrow(/^Invalid REDIS_URL=.*without a query or fragment/);
  });
});

describe('OTEL_RESOURCE_ATTRIBUTES', () => {
  // The OpenTelemetry specification discards a malformed value whole, reporting an error, and the SDKs start without
  // it: refusing it stopped a process that every other service of the deployment starts with.
  it.each(['k8s.pod.name', 'a=b,c', '=b', 'a=%zz', 'a b=c'])(
    'discards %s whole, with a warning naming the form',
    (value) => {
      const config = loadConfig({ OTEL_RESOURCE_ATTRIBUTES: value });
      expect(config.observability.resourceAttributes).toBeUndefined();
      expect(config.warnings).toEqual([
        expect.stringMatching(/^OTEL_RESOURCE_ATTRIBUTES is discarded: expected key=value pairs/),
      ]);
    },
  );

  it('names the setting, never its value (an attribute may be a secret)', () => {
    const config = loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'team=catalog,token=s3cr3t%zz' });
    expect(config.warnings.join('\n')).not.toContain('s3cr3t');
  });

  // A key is taken as it is: decoded, `%zz` threw a URIError past the one-line refusal.
  it('takes a key as it is', () => {
    expect(loadConfig({ OTEL_RESOURCE_ATTRIBUTES: 'a%zz=1' }).observability.resourceAttributes).toEqual({
      'a%zz': '1',
    });
  });

  it('reads key=value pairs, trimmed and percent-decoded', () => {
    expect(loadConfig({ OTEL_RESOURCE_ATTRIBUTES: ' a = 1 ,b=x%2Cy,' }).observability.resourceAttributes).toEqual({
      a: '1',
      b: 'x,y',
    });
  });
});

// An Origin header is scheme://host[:port], without a path or a trailing slash (RFC 6454 §6.1): an entry no Origin can
// equal matched nothing, silently, and every browser client failed at deploy time.
describe('CORS_ORIGINS', () => {
  it.each([
    'https://app.example.com/',
    'app.example.com',
    'https://app.example.com/shop',
    'https://a.example:443',
    'null',
    'capacitor://localhost/',
    // A page opened from a file sends `Origin: null`; no browser sends a ws(s) Origin.
    'file://localhost',
    'ws://app.example.com',
    'wss://app.example.com',
  ])('refuses %s, naming the setting and the form it takes', (origin) => {
    expect(() => loadConfig({ CORS_ORIGINS: origin })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: origin })).toThrow(/CORS_ORIGINS.*https:\/\/app\.example\.com/);
  });

  it('takes origins as browsers send them', () => {
    // An app's and an extension's origins too: they have no origin in URL terms, but browsers send them so.
    const origins =
      'https://app.example.com, http://localhost:3000,HTTPS://Admin.Example.com,http://[::1]:3000,capacitor://localhost,chrome-extension://abcdefghij';
    expect(loadConfig({ CORS_ORIGINS: origins }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
      'https://admin.example.com',
      'http://[::1]:3000',
      'capacitor://localhost',
      'chrome-extension://abcdefghij',
    ]);
  });
});

// METRICS_PATH=/graphql answered urql's GET queries with the metrics; /health and /readiness are answered before the
// metrics are looked for, and a path with `.` or `..` segments is refused by the server: no scrape ever reached them.
describe('METRICS_PATH', () => {
  it.each([
    '/health',
    '/readiness',
    '/graphql',
    '/cache/invalidate',
    '/graphiql-assets/x',
    '/x/../metrics',
    '/./metrics',
  ])('refuses %s, naming the setting', (path) => {
    expect(() => loadConfig({ METRICS_PATH: path })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PATH: path })).toThrow(/METRICS_PATH/);
  });

  it('takes a path of its own', () => {
    expect(loadConfig({ METRICS_PATH: '/internal/metrics' }).observability.metricsPath).toBe('/internal/metrics');
  });
});

// Spans go to the endpoint's path plus /v1/traces: a query or fragment in it put that path after them, so spans went
// to a URL no collector serves, which only a warning at shutdown told. A bare `?` is a query too (URL.search reads '').
describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it.each([
    'http://collector:4318/?tenant=a',
    'http://collector:4318#x',
    'http://collector:4318/#',
    'http://collector:4318/?',
    'http://collector:4318?',
    'http://collector:4318/otlp?',
  ])('refuses %s, whose /v1/traces would land in its query or fragment', (endpoint) => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toThrow(
      /^Invalid OTEL_EXPORTER_OTLP_ENDPOINT=/,
    );
  });

  it('where the spans would go after a bare ?: /v1/traces lands in the query', () => {
    const endpoint = 'http://collector:4318/?';
    const url = new URL(`${endpoint.replace(/\/+$/, '')}/v1/traces`); // as src/observability/tracing.ts builds it
    expect(url.pathname).toBe('/');
  });

  it('takes a base URL, with a path of its own', () => {
    const endpoint = 'http://collector:4318/otlp/';
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }).observability.otlpTracesUrl).toBe(
      'http://collector:4318/otlp/v1/traces',
    );
  });
});

// The OpenTelemetry SDKs' own settings, which operators set from their collector's docs (or an operator injects).
describe('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_SDK_DISABLED', () => {
  it('sends spans to the traces endpoint as it is, alone or over the base URL', () => {
    const traces = 'http://traces:4318/custom/path?tenant=a';
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces }).observability.otlpTracesUrl).toBe(traces);
    const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces };
    expect(loadConfig(both).observability.otlpTracesUrl).toBe(traces);
  });

  it('refuses a traces endpoint that is no http(s) URL', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' })).toThrow(
      /^Invalid OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=/,
    );
  });

  it('turns tracing off with OTEL_SDK_DISABLED=true, whatever endpoint is set', () => {
    const endpoints = {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
    };
    expect(loadConfig({ ...endpoints, OTEL_SDK_DISABLED: 'true' }).observability.otlpTracesUrl).toBeUndefined();
    expect(loadConfig({ ...endpoints, OTEL_SDK_DISABLED: 'false' }).observability.otlpTracesUrl).toBe(
      endpoints.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    );
    expect(loadConfig({}).observability.otlpTracesUrl).toBeUndefined();
  });

  // The OpenTelemetry specification's booleans: only "true", in any case, is true; anything else is false, as the SDKs
  // read it (with a warning): a value they start with must not stop this process.
  it.each([
    ['TRUE', undefined, false],
    [' True ', undefined, false],
    ['FALSE', 'http://collector:4318/v1/traces', false],
    ['', 'http://collector:4318/v1/traces', false],
    ['1', 'http://collector:4318/v1/traces', true],
    ['0', 'http://collector:4318/v1/traces', true],
    ['yes', 'http://collector:4318/v1/traces', true],
  ])('reads OTEL_SDK_DISABLED=%j as the SDKs do', (disabled, url, warned) => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: disabled };
    const config = loadConfig(env);
    expect(config.observability.otlpTracesUrl).toBe(url);
    expect(config.warnings).toEqual(warned ? [expect.stringMatching(/^OTEL_SDK_DISABLED is read as false/)] : []);
  });
});
