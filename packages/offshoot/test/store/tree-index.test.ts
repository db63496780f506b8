// The local backend's indexed listing (listTexts): served from its index file only while every directory of the
// tree is the one the index was written from, and written only for a tree that has been quiet.
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { KeyText } from '../../src/store/backend.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';

// Every text here is indexable but one marked torn.
const indexable = (text: string): boolean => !text.startsWith('torn');
// An hour ago: far older than the quiet period, and unlike any mtime a real write gives.
const PAST = new Date(Date.now() - 3_600_000);

describe('indexed listing (listTexts)', () => {
  let tmp: string;
  let root: string;
  let index: string;
  let b: LocalBackend;
  beforeEach(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    root = path.join(tmp, 'store');
    index = path.join(tmp, 'cache', 'refs-app.json');
    b = new LocalBackend(root);
    for (const [k, v] of [
      ['refs/app/main', 'm1'],
      ['refs/app/feature/x', 'x1'],
      ['refs/app/b', 'b1'],
      ['refs/other/main', 'o1'],
    ])
      await b.put(k as string, Buffer.from(v as string));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  // Sets every directory of refs/app/ an hour back, as if nothing had changed in it since.
  const age = (): void => {
    for (const d of ['refs/app/feature', 'refs/app']) utimesSync(path.join(root, d), PAST, PAST);
  };
  const fresh = async (): Promise<KeyText[]> => {
    const keys = await b.listKeys('refs/app/');
    const texts = await b.getManyText(keys);
    return keys.map((key, i) => ({ key, text: texts[i] as string }));
  };
  // Rewrites one text inside the index file: a listing that returns it was served from the index.
  const tamper = (key: string, text: string): void => {
    const idx = JSON.parse(readFileSync(index, 'utf8')) as { keys: string[]; texts: string[] };
    idx.texts[idx.keys.indexOf(key)] = text;
    writeFileSync(index, JSON.stringify(idx));
  };

  it('lists what listKeys and getManyText give, in byte order, and writes no index for a tree just changed', async () => {
    const got = await b.listTexts('refs/app/', index, indexable);
    assert.deepEqual(got, await fresh());
    assert.deepEqual(
      got.map((g) => g.key),
      ['refs/app/b', 'refs/app/feature/x', 'refs/app/main'],
    );
    assert.equal(existsSync(index), false, 'a tree changed within the quiet period is not indexed');
  });

  it('a quiet tree is indexed and then served from the index, one stat per directory', async () => {
    age();
    assert.deepEqual(await b.listTexts('refs/app/', index, indexable), await fresh());
    assert.equal(existsSync(index), true);
    tamper('refs/app/main', 'from the index');
    const again = await b.listTexts('refs/app/', index, indexable);
    assert.equal(again.find((g) => g.key === 'refs/app/main')?.text, 'from the index');
  });

  for (const [what, change] of [
    ['a replaced object', (x: LocalBackend) => x.put('refs/app/b', Buffer.from('b2'))],
    ['a new object', (x: LocalBackend) => x.put('refs/app/c', Buffer.from('c1'))],
    ['a deleted object', (x: LocalBackend) => x.delete('refs/app/b')],
    ['a replaced object in a subdirectory', (x: LocalBackend) => x.put('refs/app/feature/x', Buffer.from('x2'))],
    ['a new subdirectory', (x: LocalBackend) => x.put('refs/app/fix/y', Buffer.from('y1'))],
  ] as const) {
    it(`${what} is seen at once: the index no longer matches its directories`, async () => {
      age();
      await b.listTexts('refs/app/', index, indexable);
      tamper('refs/app/main', 'stale');
      await change(b);
      const got = await b.listTexts('refs/app/', index, indexable);
      assert.deepEqual(got, await fresh());
      assert.equal(got.find((g) => g.key === 'refs/app/main')?.text, 'm1');
    });
  }

  it('a directory removed and made again with its old mtime is not the indexed one', async () => {
    age();
    await b.listTexts('refs/app/', index, indexable);
    rmSync(path.join(root, 'refs/app/feature'), { recursive: true });
    mkdirSync(path.join(root, 'refs/app/feature'));
    writeFileSync(path.join(root, 'refs/app/feature/x'), 'x3');
    age();
    const got = await b.listTexts('refs/app/', index, indexable);
    assert.equal(got.find((g) => g.key === 'refs/app/feature/x')?.text, 'x3');
  });

  it('a listing with a text that is not indexable is not indexed, so its repair in place shows at once', async () => {
    await b.put('refs/app/b', Buffer.from('torn'));
    age();
    await b.listTexts('refs/app/', index, indexable);
    assert.equal(existsSync(index), false);
    // Rewritten in place, as a restore with cp does: the directory does not change.
    writeFileSync(path.join(root, 'refs/app/b'), 'b3');
    age();
    const got = await b.listTexts('refs/app/', index, indexable);
    assert.equal(got.find((g) => g.key === 'refs/app/b')?.text, 'b3');
    assert.equal(existsSync(index), true);
  });

  it("an index written for another tree (a store copied with it) is not this tree's", async () => {
    age();
    await b.listTexts('refs/app/', index, indexable);
    const copy = path.join(tmp, 'copy');
    cpSync(root, copy, { recursive: true, preserveTimestamps: true });
    const other = new LocalBackend(copy);
    await other.put('refs/app/main', Buffer.from('m-copy'));
    const got = await other.listTexts('refs/app/', index, indexable);
    assert.equal(got.find((g) => g.key === 'refs/app/main')?.text, 'm-copy');
  });

  it('a torn or foreign index is read around and written anew', async () => {
    age();
    mkdirSync(path.dirname(index), { recursive: true });
    for (const junk of ['', '{"version":1,"dirs":[],"keys":["a"],"texts":[]}', '{"version":2}', 'not json']) {
      writeFileSync(index, junk);
      assert.deepEqual(await b.listTexts('refs/app/', index, indexable), await fresh());
      assert.equal(JSON.parse(readFileSync(index, 'utf8')).version, 1);
    }
  });

  it('a tree that is gone lists nothing and leaves no index behind', async () => {
    age();
    await b.listTexts('refs/app/', index, indexable);
    rmSync(path.join(root, 'refs/app'), { recursive: true });
    assert.deepEqual(await b.listTexts('refs/app/', index, indexable), []);
    assert.equal(existsSync(index), false);
  });
});
