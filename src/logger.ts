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

/** The process-wide JSON logger. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: redact, censor: '[redacted]' } });
}
