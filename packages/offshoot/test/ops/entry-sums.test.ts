// A sealed cache entry's page sums are decoded once per process while its `.pages` file is unchanged, and every
// caller gets a view of its own over the same arrays: a session seeded with them copies before its first write.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { entryPageSums } from '../../src/ops/helpers/chain/entry-sums.js';
import { SessionSink } from '../../src/session/session-sink.js';
import { PageSums, pageSumsPath, writePageSums } from '../../src/sqlite/page-sums.js';

describe("a cache entry's page sums", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-entry-sums-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const entry = path.join(dir, 'entry.db');
  const sumsOf = (s: PageSums | undefined) => [...(s?.sums ?? [])];
  const page = (byte: number) => Buffer.alloc(4096, byte);

  it('hands each caller an object of its own, and reads a replaced file again', async () => {
    await writePageSums(entry, new PageSums(4096, BigUint64Array.from([1n, 2n, 3n])));
    const first = await entryPageSums(entry);
    assert.deepEqual(sumsOf(first), [1n, 2n, 3n]);
    const second = await entryPageSums(entry);
    assert.notEqual(second, first);
    assert.deepEqual(second?.file, first?.file, 'both name the file they came from');
    (first as PageSums).file = undefined;
    assert.notEqual((await entryPageSums(entry))?.file, undefined, 'a caller that rewrote its file left the rest');
    await writePageSums(entry, new PageSums(4096, BigUint64Array.from([4n, 5n])));
    assert.deepEqual(sumsOf(await entryPageSums(entry)), [4n, 5n], 'a replaced file is read again');
    rmSync(pageSumsPath(entry));
    assert.equal(await entryPageSums(entry), undefined, 'and a missing one is none');
  });

  it('stay as they were when a session seeded with them writes and grows', async () => {
    await writePageSums(entry, new PageSums(4096, BigUint64Array.from([1n, 2n, 3n])));
    const seeded = await entryPageSums(entry);
    const sink = new SessionSink(dir);
    sink.seedClean(seeded as PageSums, seeded?.rollingChecksum() ?? 0n);
    await sink.apply(4096, { frames: [{ pgno: 2, data: page(7) }], commitSize: 3, endOffset: 0 });
    assert.notEqual(sink.pageSums.get(2), 2n, 'the session has the page it wrote');
    assert.deepEqual(sumsOf(await entryPageSums(entry)), [1n, 2n, 3n], 'the entry does not');
    for (let n = 4; n <= 300; n++)
      await sink.apply(4096, { frames: [{ pgno: n, data: page(n & 0xff) }], commitSize: n, endOffset: 0 });
    assert.equal(sink.pageSums.pageCount, 300, 'grown a page a commit');
    assert.ok(sink.pageSums.get(300) !== 0n && sink.pageSums.get(3) === 3n);
    assert.deepEqual(sumsOf(await entryPageSums(entry)), [1n, 2n, 3n], 'and the entry is still its own');
  });
});
