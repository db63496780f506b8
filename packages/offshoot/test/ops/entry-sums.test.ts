// A sealed cache entry's page sums are decoded once per process while its `.pages` file is unchanged, and every
// caller gets a copy of its own: a session patches the sums it was seeded with in place.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { entryPageSums } from '../../src/ops/helpers/chain/entry-sums.js';
import { PageSums, pageSumsPath, writePageSums } from '../../src/sqlite/page-sums.js';

describe("a cache entry's page sums", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-entry-sums-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const entry = path.join(dir, 'entry.db');
  const sumsOf = (s: PageSums | undefined) => [...(s?.sums ?? [])];

  it('hands each caller a copy of its own, and reads a replaced file again', async () => {
    await writePageSums(entry, new PageSums(4096, BigUint64Array.from([1n, 2n, 3n])));
    const first = await entryPageSums(entry);
    assert.deepEqual(sumsOf(first), [1n, 2n, 3n]);
    (first as PageSums).sums[0] = 99n;
    const second = await entryPageSums(entry);
    assert.deepEqual(sumsOf(second), [1n, 2n, 3n], 'a caller that patched its sums changed no one else’s');
    assert.notEqual(second, first);
    assert.deepEqual(second?.file, first?.file, 'both name the file they came from');
    await writePageSums(entry, new PageSums(4096, BigUint64Array.from([4n, 5n])));
    assert.deepEqual(sumsOf(await entryPageSums(entry)), [4n, 5n], 'a replaced file is read again');
    rmSync(pageSumsPath(entry));
    assert.equal(await entryPageSums(entry), undefined, 'and a missing one is none');
  });
});
