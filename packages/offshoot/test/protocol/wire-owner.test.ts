// The wire types live once, in the zero-dependency client; the one copy the layering forces (the engine's error
// codes, which the core layer cannot import) is kept identical here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAEMON_ERROR_CODES, type DaemonErrorCode } from '@offshoot/client';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import type { ErrorCode } from '../../src/core/errors.js';

// Exhaustive over the engine's codes: a code added on one side only fails to compile (here or below).
const ENGINE_CODES: Record<ErrorCode, true> = {
  USAGE: true,
  INVALID_NAME: true,
  INVALID_ARGUMENT: true,
  NOT_FOUND: true,
  NOT_INITIALIZED: true,
  ALREADY_EXISTS: true,
  CAS_CONFLICT: true,
  BASE_MOVED: true,
  MERGE_CONFLICT: true,
  PROTECTED: true,
  LEASE_HELD: true,
  LEASE_LOST: true,
  FENCED: true,
  BUSY: true,
  SESSION_OPEN: true,
  CHECKSUM_MISMATCH: true,
  CORRUPT: true,
  LAYOUT_TOO_NEW: true,
  SCHEMA_TOO_NEW: true,
  UNSUPPORTED: true,
  TIMEOUT: true,
  TOO_LARGE: true,
  UNAVAILABLE: true,
  IO: true,
  INTERNAL: true,
};
const clientToEngine = (c: DaemonErrorCode): ErrorCode => c;
const engineToClient = (c: ErrorCode): DaemonErrorCode => c;

test("the engine's error codes are exactly the client's daemon error codes", () => {
  assert.deepEqual(Object.keys(ENGINE_CODES).sort(), [...DAEMON_ERROR_CODES].sort());
  for (const c of DAEMON_ERROR_CODES) {
    assert.equal(engineToClient(clientToEngine(c)), c);
    if (c !== 'INTERNAL') assert.notEqual(exitCodeFor(c), exitCodeFor('INTERNAL'), `${c} has its own exit class`);
  }
});
