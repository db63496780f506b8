import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import {
  checkSocketPath,
  defaultSocketPath,
  MAX_SOCKET_PATH_BYTES,
  resolveSocketPath,
} from '../../src/protocol/socket-path.js';

test('the default socket hashes the store spec as typed under the user cache dir', () => {
  const env = { XDG_CACHE_HOME: '/cache', HOME: '/home/u' };
  const id = createHash('sha256').update('.offshoot').digest('hex').slice(0, 16);
  assert.equal(defaultSocketPath('.offshoot', env), `/cache/offshoot/${id}.sock`);
  assert.notEqual(
    defaultSocketPath('./.offshoot', env),
    defaultSocketPath('.offshoot', env),
    'the literal spec, not the resolved path',
  );
  if (process.platform !== 'darwin')
    assert.equal(
      defaultSocketPath('s', { HOME: '/home/u', XDG_CACHE_HOME: 'relative' }).startsWith('/home/u/.cache/offshoot/'),
      true,
    );
});

test('-socket wins over OFFSHOOT_SOCKET, which wins over the default', () => {
  const env = { XDG_CACHE_HOME: '/cache', OFFSHOOT_SOCKET: '/env.sock' };
  assert.equal(resolveSocketPath('/flag.sock', 'spec', env), '/flag.sock');
  assert.equal(resolveSocketPath(undefined, 'spec', env), '/env.sock');
  assert.equal(
    resolveSocketPath(undefined, 'spec', { XDG_CACHE_HOME: '/cache' }),
    defaultSocketPath('spec', { XDG_CACHE_HOME: '/cache' }),
  );
});

test('a socket path longer than sockaddr_un allows is refused, counting bytes not characters', () => {
  const fits = '/' + 'a'.repeat(MAX_SOCKET_PATH_BYTES - 1);
  assert.equal(checkSocketPath(fits), fits);
  assert.throws(
    () => checkSocketPath(fits + 'b'),
    (e) => hasCode(e, 'INVALID_ARGUMENT') && /108 bytes/.test(e.message),
  );
  const multibyte = '/' + 'é'.repeat(60);
  assert.throws(
    () => checkSocketPath(multibyte),
    (e) => hasCode(e, 'INVALID_ARGUMENT') && /121 bytes/.test(e.message),
  );
});
