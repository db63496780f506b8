import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WalReader, isWalRestarted, readAllTransactions, type WalTransaction } from '../../src/sqlite/wal-reader.js';

const VECTOR_DIR = fileURLToPath(new URL('../vectors/wal/', import.meta.url));
const FRAME = 24 + 512;
const SEED = 0x5eed0ff5;

/** mulberry32: a seeded generator, so any failure reproduces exactly. */
function prng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

const signature = (txns: WalTransaction[]): string[] =>
  txns.map(
    (t) => `${t.endOffset}:${t.commitSize}:${t.frames.map((f) => `${f.pgno}/${f.data.toString('base64')}`).join(',')}`,
  );

interface Case {
  name: string;
  bytes: Buffer;
  original: WalTransaction[];
}

function fuzzTest(title: string, fn: (c: Case, walPath: string, rand: (n: number) => number) => Promise<void>): void {
  test(title, { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    try {
      const rand = prng(SEED);
      for (const name of ['a-3txn-ps512.wal', 'b-before-restart-ps512.wal', 'b-after-restart-ps512.wal']) {
        const src = path.join(VECTOR_DIR, name);
        const original = (await readAllTransactions(src, 512)).transactions;
        assert.ok(original.length > 0);
        await fn({ name, bytes: fs.readFileSync(src), original }, path.join(dir, `${name}-fuzz`), rand);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

fuzzTest(
  'a truncated WAL yields exactly the transactions that end within it',
  async ({ name, bytes, original }, walPath, rand) => {
    const cuts = new Set([0, 1, 31, 32, 33, bytes.length - 1, bytes.length]);
    for (const t of original) {
      for (const c of [t.endOffset - 1, t.endOffset, t.endOffset + 1]) cuts.add(c);
    }
    while (cuts.size < 150) cuts.add(rand(bytes.length + 1));
    for (const cut of cuts) {
      fs.writeFileSync(walPath, bytes.subarray(0, Math.min(cut, bytes.length)));
      const scan = await readAllTransactions(walPath, 512);
      const expected = original.filter((t) => t.endOffset <= cut);
      assert.deepEqual(signature(scan.transactions), signature(expected), `${name} cut at ${cut}`);
      assert.equal(scan.endOffset, cut < 32 ? 0 : (expected.at(-1)?.endOffset ?? 32), `${name} end at ${cut}`);
    }
  },
);

fuzzTest(
  'one changed byte ends the log at the frame it hits, or invalidates the header',
  async ({ name, bytes, original }, walPath, rand) => {
    const validEnd = original.at(-1)?.endOffset ?? 32;
    for (let i = 0; i < 250; i++) {
      const at = i < 40 ? rand(32) : rand(bytes.length);
      const copy = Buffer.from(bytes);
      copy[at] = (copy[at] as number) ^ (1 + rand(255));
      fs.writeFileSync(walPath, copy);
      const scan = await readAllTransactions(walPath, 512);
      const frameStart = at < 32 ? -1 : 32 + Math.floor((at - 32) / FRAME) * FRAME;
      const expected = at >= validEnd ? original : original.filter((t) => t.endOffset <= frameStart);
      assert.deepEqual(signature(scan.transactions), signature(expected), `${name} byte ${at}`);
      if (at < 32) assert.equal(scan.header, undefined, `${name} header byte ${at}`);
    }
  },
);

fuzzTest(
  'many random changes never throw and only ever yield a prefix of the real transactions',
  async ({ name, bytes, original }, walPath, rand) => {
    const real = signature(original);
    for (let i = 0; i < 200; i++) {
      const copy = Buffer.from(bytes.subarray(0, bytes.length - rand(2 * FRAME)));
      const flips = 1 + rand(24);
      for (let k = 0; k < flips; k++) copy[rand(copy.length)] = rand(256);
      fs.writeFileSync(walPath, copy);
      const got = signature((await readAllTransactions(walPath, 512)).transactions);
      assert.deepEqual(got, real.slice(0, got.length), `${name} round ${i}`);
    }
  },
);

fuzzTest(
  'a bound reader facing corrupted bytes reports nothing new (or a restart), and recovers when they are repaired',
  async ({ name, bytes }, walPath, rand) => {
    fs.writeFileSync(walPath, bytes);
    const r = new WalReader(walPath, 512);
    while (await r.next());
    const offset = r.offset;
    for (let i = 0; i < 100; i++) {
      const copy = Buffer.from(bytes);
      for (let k = 0, n = 1 + rand(8); k < n; k++) copy[rand(copy.length)] = rand(256);
      const tail = Buffer.alloc(rand(3 * FRAME));
      for (let k = 0; k < tail.length; k++) tail[k] = rand(256);
      fs.writeFileSync(walPath, Buffer.concat([copy, tail]));
      try {
        assert.equal(await r.next(), undefined, `${name} round ${i}`);
      } catch (err) {
        assert.ok(isWalRestarted(err), `${name} round ${i}: only a restart may be reported, got ${String(err)}`);
      }
      assert.equal(r.offset, offset, `${name} round ${i}: the reader did not move`);
    }
    fs.writeFileSync(walPath, bytes);
    assert.equal(await r.next(), undefined);
  },
);

test('random garbage, including garbage behind a plausible magic, is never an error', { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const rand = prng(SEED ^ 0xffff);
    const walPath = path.join(dir, 'garbage.db-wal');
    for (let i = 0; i < 200; i++) {
      const junk = Buffer.alloc(rand(4 * FRAME));
      for (let k = 0; k < junk.length; k++) junk[k] = rand(256);
      if (junk.length >= 12 && i % 2 === 0) {
        junk.writeUInt32BE(0x377f0682 + (i % 4 === 0 ? 1 : 0), 0);
        junk.writeUInt32BE(3007000, 4);
        junk.writeUInt32BE(512, 8);
      }
      fs.writeFileSync(walPath, junk);
      const scan = await readAllTransactions(walPath);
      assert.equal(scan.transactions.length, 0, `round ${i}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
