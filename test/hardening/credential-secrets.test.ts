import { describe, expect, it } from 'vitest';
import { createCredentialSecrets } from '../../src/pim/credential.ts';

// createCredentialSecrets promises "each whole value, and for `Authorization: <scheme> <token>` the token alone".
// It takes every whitespace-separated word after the first, of every credential header: a caller's header of
// 1,900 words (13 KB, inside HTTP_MAX_HEADER_BYTES) makes 1,900 secrets, and every upstream body of that
// caller's calls is then scanned once per secret (answer.ts redact: `includes` + `replaceAll` per form).
// Measured on 5 calls of a 2 MB body: 1.3 s instead of 0.2-0.4 s; the budget does not bound this CPU.
describe('the secrets blanked out of one call', () => {
  const secretsOf = createCredentialSecrets(['x-api-key', 'authorization']);
  const words = Array.from({ length: 1_900 }, (_, i) => `j${String(i).padStart(5, '0')}`).join(' ');

  it('are the whole value and the token of `<scheme> <token>`, not every word a caller puts in the header', () => {
    expect(secretsOf({ authorization: `Bearer ${words}` }).length).toBeLessThanOrEqual(2);
    expect(secretsOf({ 'x-api-key': `key-0123456789 ${words}` }).length).toBeLessThanOrEqual(2);
  });
});
