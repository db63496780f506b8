import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import {
  checkSocketPath,
  defaultSocketPath,
  MAX_SOCKET_PATH_BYTES,
  resolveSocketPath,
} from '../../src/protocol/socket-path.js';
import { canonicalStore, parseStoreSpec, storeSocketKey } from '../../src/store/store-spec.js';

test('the default socket hashes the canonical store under the user cache dir', () => {
  const env = { XDG_CACHE_HOME: '/cache', HOME: '/home/u' };
  const cwd = mkdtempSync(join(tmpdir(), 'offshoot-'));
  try {
    const canonical = canonicalStore(parseStoreSpec('.offshoot', cwd));
    const id = createHash('sha256').update(canonical).digest('hex').slice(0, 16);
    assert.equal(defaultSocketPath(canonical, env), `/cache/offshoot/${id}.sock`);
    for (const spelling of ['./.offshoot', `${cwd}/.offshoot`, `${cwd}//x/../.offshoot`, `file://${cwd}/.offshoot`])
      assert.equal(canonicalStore(parseStoreSpec(spelling, cwd)), canonical, spelling);
    symlinkSync(cwd, join(cwd, 'link'));
    assert.equal(canonicalStore(parseStoreSpec('link/.offshoot', cwd)), canonical, 'through a symlink');
    assert.notEqual(canonicalStore(parseStoreSpec('.offshoot', join(cwd, 'elsewhere'))), canonical);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
  assert.equal(canonicalStore(parseStoreSpec('s3://bkt/a/b/')), 's3://bkt/a/b');
  assert.equal(canonicalStore(parseStoreSpec('S3://bkt//a/')), 's3://bkt/a');
  assert.equal(canonicalStore(parseStoreSpec('s3://bkt')), 's3://bkt');
  if (process.platform !== 'darwin')
    assert.equal(
      defaultSocketPath('s', { HOME: '/home/u', XDG_CACHE_HOME: 'relative' }).startsWith('/home/u/.cache/offshoot/'),
      true,
    );
});

test('one bucket name on two S3 endpoints is two stores with two default sockets; one endpoint however spelled is one', () => {
  const spec = parseStoreSpec('s3://bkt/p');
  const key = (endpoint: string | undefined) => storeSocketKey(spec, endpoint);
  assert.equal(key(undefined), 's3://bkt/p', 'AWS itself: the canonical store alone, as before');
  assert.notEqual(key('http://127.0.0.1:9000'), key('http://127.0.0.1:9001'));
  assert.notEqual(key('http://127.0.0.1:9000'), key(undefined));
  assert.equal(key('HTTP://127.0.0.1:9000/'), key('http://127.0.0.1:9000'));
  assert.notEqual(defaultSocketPath(key('http://a:1'), {}), defaultSocketPath(key('http://b:1'), {}));
  const local = parseStoreSpec('/srv/store');
  assert.equal(storeSocketKey(local, 'http://ignored:1'), canonicalStore(local), 'a local store ignores the endpoint');
});

test('a file:// store URL that is not absolute is a usage error', () => {
  assert.throws(
    () => parseStoreSpec('file://relative/dir'),
    (e) => hasCode(e, 'USAGE') && /file:\/\/\//.test(e.hint ?? ''),
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
