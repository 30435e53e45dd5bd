import { pino, type Logger } from 'pino';

/** Paths pino blanks out wherever they appear in a log line: credentials never reach the log. */
const redact = [
  '*.headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
];

/**
 * The process-wide JSON logger, on stdout. Writes are asynchronous (lines written while one write
 * is in flight go out together) and flushed synchronously when the process exits.
 */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: redact, censor: '[redacted]' } }, pino.destination({ sync: false }));
}
