// Every response line goes through one guard: too large an answer (past the line limit, or past what V8 can
// serialise) becomes TOO_LARGE, and a value JSON cannot carry becomes INTERNAL, never an exception.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeResponse, MAX_RESPONSE_BYTES } from '../../src/protocol/response-line.js';
import { MAX_RESPONSE_BYTES as CLIENT_MAX } from '@offshoot/client';

function parsed(line: string): Record<string, unknown> {
  assert.ok(line.endsWith('\n'));
  return JSON.parse(line) as Record<string, unknown>;
}

test('answers past the line limit, or past what JSON.stringify can build, are TOO_LARGE; others pass as they are', () => {
  assert.equal(MAX_RESPONSE_BYTES, CLIENT_MAX, "the daemon's line limit is the client's");
  assert.deepEqual(parsed(encodeResponse({ ok: true, txid: 3 })), { ok: true, txid: 3 });
  const long = parsed(encodeResponse({ ok: true, result: 'x'.repeat(2000) }, 1000));
  assert.equal(long.code, 'TOO_LARGE');
  assert.match(String(long.hint), /--summary/);
  // V8's own limit, as JSON.stringify meets it on a 600 MB answer.
  const unbuildable = {
    ok: true,
    result: {
      toJSON(): never {
        throw new RangeError('Invalid string length');
      },
    },
  };
  assert.equal(parsed(encodeResponse(unbuildable)).code, 'TOO_LARGE');
  assert.equal(parsed(encodeResponse({ ok: true, result: 1n } as unknown as { ok: true })).code, 'INTERNAL');
});
