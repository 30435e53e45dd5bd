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
 * The process-wide JSON logger, on stdout. Lines are buffered up to 4 KB and written asynchronously,
 * at the latest a second later, and flushed synchronously when the process exits.
 */
export function createLogger(level: string): Logger {
  // One write per request line was a syscall and a thread-pool hop each: most of the log line's cost.
  const destination = pino.destination({ sync: false, minLength: 4_096 });
  // The callback form never throws, not even once stdout has gone away.
  setInterval(() => destination.flush(() => {}), 1_000).unref();
  return pino({ level, redact: { paths: redact, censor: '[redacted]' } }, destination);
}
