// keyPaths places every key where keyPath does, and fails a bad key with keyPath's own error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyPath, keyPaths } from '../../src/store/local/key-path.js';

const root = '/store';

test('keyPaths gives keyPath for every key, escaped segments included', () => {
  const pathOf = keyPaths(root);
  const keys = [
    'refs/app/main',
    'refs/app/b.lock',
    'refs/app/.tmp-x',
    'refs/app/%odd',
    'refs/x.lock/main',
    'refs/x.lock/b',
    'data/l1/base.json',
    'offshoot.json',
    'refs/app/main',
  ];
  for (const key of keys) assert.equal(pathOf(key), keyPath(root, key), key);
  assert.equal(keyPaths(`${root}/`)('refs/app/main'), keyPath(root, 'refs/app/main'));
});

test('a key keyPath refuses is refused by keyPaths with the same error', () => {
  const pathOf = keyPaths(root);
  pathOf('refs/app/main');
  for (const key of [
    'refs/app/',
    'refs/app/..',
    'refs/../x',
    'refs//x',
    '/refs/x',
    'refs/app/a\0b',
    `refs/app/${'x'.repeat(300)}`,
  ]) {
    let expected: unknown;
    try {
      keyPath(root, key);
    } catch (err) {
      expected = err;
    }
    assert.ok(expected instanceof Error, key);
    assert.throws(
      () => pathOf(key),
      (err: unknown) => err instanceof Error && err.message === expected.message,
      key,
    );
  }
});
