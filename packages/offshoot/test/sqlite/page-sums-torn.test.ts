// A re-stamp patches a checkout's `.pages` in place, version 2 (with fast hashes) included, and neither it nor the
// `.sum` after it is fsynced: a crash can keep any subset of the patch's writes (each entry, the header, the cut of
// the hash column) beside either `.sum`. Every such file, read beside every `.sum` a crash can leave, must be either
// rejected or trusted with exactly the sums of the content that `.sum` vouches for, and never with a fast hash that
// would vouch for a page's bytes under another checksum (the changed page an at-rest checkpoint would then miss).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pageChecksum } from '../../src/ltx/checksum.js';
import type { Sidecar } from '../../src/sqlite/checkout-sidecar.js';
import { loadPageHasher } from '../../src/sqlite/page-hash.js';
import {
  PageSums,
  pageSumsPath,
  readPageSums,
  SumsBaseline,
  trustedPageSums,
  writePageSums,
} from '../../src/sqlite/page-sums.js';
import { openTestStore, type TestStore } from '../ops/harness.js';

const PAGE = 512;

interface Content {
  pages: Buffer[];
  sums: BigUint64Array;
  hashes: Uint32Array;
}

async function contentOf(pages: Buffer[]): Promise<Content> {
  const hasher = await loadPageHasher();
  const sums = new BigUint64Array(pages.length);
  const hashes = new Uint32Array(2 * pages.length);
  pages.forEach((data, i) => {
    sums[i] = pageChecksum(i + 1, data);
    hasher.hash(data, hashes, i);
  });
  return { pages, sums, hashes };
}

/** Every file a crash can leave of a patch from `was` to `now`: each differing 8-byte word and the length. */
function* tornFiles(was: Buffer, now: Buffer): Generator<Buffer> {
  const words = Math.max(was.length, now.length) / 8;
  const differing: number[] = [];
  for (let w = 0; w < words; w++) {
    const a = was.subarray(8 * w, 8 * w + 8);
    const b = now.subarray(8 * w, 8 * w + 8);
    if (!a.equals(b)) differing.push(w);
  }
  assert.ok(differing.length <= 14, `a small patch: ${differing.length} words`);
  for (const length of new Set([was.length, now.length])) {
    for (let mask = 0; mask < 1 << differing.length; mask++) {
      const file = Buffer.alloc(length);
      was.copy(file, 0, 0, Math.min(length, was.length));
      differing.forEach((w, bit) => {
        if ((mask >> bit) & 1 && 8 * w < length && 8 * w < now.length) now.copy(file, 8 * w, 8 * w, 8 * w + 8);
      });
      yield file;
    }
  }
}

/** What a reader takes from a file beside a `.sum`: the vouched sums, or undefined (it reads the pages instead). */
function readerTakes(file: Buffer, sc: Sidecar | undefined): PageSums | undefined {
  let sums: PageSums;
  try {
    sums = PageSums.decode(file);
  } catch {
    return undefined;
  }
  return trustedPageSums(sums, sc);
}

/**
 * Whether trusting `got` for a checkout vouched to hold `vouched` can go wrong: sums other than exactly the
 * content's, or a fast hash that matches some bytes the page held (before or after) while the sum beside it is not
 * those bytes' checksum.
 */
async function harm(got: PageSums, vouched: Content, all: Content[]): Promise<string | undefined> {
  if (got.pageCount !== vouched.sums.length) return `${got.pageCount} pages trusted for ${vouched.sums.length}`;
  for (let i = 0; i < got.pageCount; i++)
    if (got.sums[i] !== vouched.sums[i]) return `page ${i + 1}'s sum is not the vouched content's`;
  const h = got.hashes;
  if (h === undefined) return undefined;
  for (let i = 0; i < got.pageCount; i++) {
    if (h[2 * i] === 0 && h[2 * i + 1] === 0) continue;
    for (const c of all) {
      if (i >= c.pages.length) continue;
      const same = c.hashes[2 * i] === h[2 * i] && c.hashes[2 * i + 1] === h[2 * i + 1];
      if (same && c.sums[i] !== got.sums[i]) return `page ${i + 1}'s hash vouches for bytes of another checksum`;
    }
  }
  return undefined;
}

const xor = (sums: BigUint64Array): string => new PageSums(PAGE, sums).rollingChecksum().toString(16);

describe('a torn re-stamp of page sums', () => {
  let ts: TestStore;
  before(async () => {
    ts = await openTestStore();
  });
  after(async () => ts.cleanup());

  const cases = [
    { name: 'same page count', n: 8, m: 8, changed: [2, 5, 7] },
    { name: 'grown', n: 8, m: 10, changed: [2, 5] },
    { name: 'cut', n: 8, m: 6, changed: [2] },
    { name: 'grown to twice (the version-1 length equals the version-2 one)', n: 8, m: 16, changed: [] },
  ];
  for (const c of cases) {
    it(`${c.name}: every torn file beside every .sum is rejected or trusted exactly`, async () => {
      const old = await contentOf(Array.from({ length: c.n }, () => randomBytes(PAGE)));
      const pages = Array.from({ length: c.m }, (_, i) =>
        i < c.n && !c.changed.includes(i + 1) ? (old.pages[i] as Buffer) : randomBytes(PAGE),
      );
      const cur = await contentOf(pages);
      const db = ts.tmpPath(`torn-${c.n}-${c.m}.db`);
      // What a fresh checkout holds: the cache entry's version 2, with fast hashes.
      await writePageSums(db, new PageSums(PAGE, old.sums.slice(), old.hashes.slice()));
      const oldBytes = readFileSync(pageSumsPath(db));
      const read = await readPageSums(db);
      assert.ok(read?.file);
      const baseline = new SumsBaseline(read.file, c.n);
      for (const p of c.changed) baseline.changed.add(p);
      baseline.resizedTo(c.m);
      const ino = statSync(pageSumsPath(db)).ino;
      const version = await writePageSums(db, new PageSums(PAGE, cur.sums.slice(), undefined, baseline));
      assert.equal(version, 1, 'the re-stamp writes version 1');
      assert.equal(statSync(pageSumsPath(db)).ino, ino, 'the version-2 file was patched in place');
      const newBytes = readFileSync(pageSumsPath(db));
      assert.deepEqual(newBytes, new PageSums(PAGE, cur.sums).encode(), 'the patch is the whole rewrite');

      // The `.sum` a crash can leave: none (withdrawn before close's flush), the placement's (no pages_version,
      // named here though an identity check rejects it first), or the re-stamp's.
      const placed: Sidecar = { lineage: 'l', epoch: 1, txid: 1, ltx_checksum: xor(old.sums) };
      const stamped: Sidecar = { lineage: 'l', epoch: 1, txid: 2, ltx_checksum: xor(cur.sums), pages_version: 1 };
      let states = 0;
      let trustedNew = 0;
      let wrongUnderOldRule = 0;
      for (const file of tornFiles(oldBytes, newBytes)) {
        states++;
        assert.equal(readerTakes(file, undefined), undefined, 'no .sum vouches for nothing');
        for (const [sc, vouched] of [
          [placed, old],
          [stamped, cur],
        ] as const) {
          const got = readerTakes(file, sc);
          if (got === undefined) continue;
          if (sc === stamped) trustedNew++;
          const why = await harm(got, vouched, [old, cur]);
          assert.equal(why, undefined, `state ${states}, .sum at txid ${sc.txid}: ${why}`);
        }
        // The same state beside a `.sum` that does not say which version it vouches for (a reader of before).
        const { pages_version: _, ...legacy } = stamped;
        const got = readerTakes(file, legacy);
        if (got !== undefined && (await harm(got, cur, [old, cur])) !== undefined) wrongUnderOldRule++;
      }
      assert.ok(trustedNew >= 1, 'the whole patch is trusted');
      if (c.m === c.n)
        assert.ok(wrongUnderOldRule > 0, 'without pages_version some torn state is trusted wrongly: the test sees it');
    });
  }
});
