import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '../../src/core/errors.js';
import type { DecodedLtx } from '../../src/ltx/decoder.js';
import { Prng } from '../ops/prng.js';
import { VECTOR_NAMES, decodeBytes, vectorBytes } from './vector-files.js';

const CASES = Number(process.env.OFFSHOOT_FUZZ_CASES ?? 10_000);
const SEED = 0x17f0_2026;

const INTERESTING_U32 = [
  0, 1, 0x7f, 0x80, 0xff, 0x100, 0x1000, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 512, 4096,
  0x184d2204,
];

type Mutator = (b: Buffer, rnd: () => number, donor: Buffer) => Buffer;

const int = (rnd: () => number, n: number): number => Math.floor(rnd() * n);

const MUTATORS: Array<[string, Mutator]> = [
  [
    'flip bits',
    (b, rnd) => {
      const out = Buffer.from(b);
      for (let k = 1 + int(rnd, 4); k > 0; k--) out[int(rnd, out.length)]! ^= 1 << int(rnd, 8);
      return out;
    },
  ],
  [
    'random byte',
    (b, rnd) => {
      const out = Buffer.from(b);
      out[int(rnd, out.length)] = int(rnd, 256);
      return out;
    },
  ],
  [
    'interesting u32',
    (b, rnd) => {
      const out = Buffer.from(b);
      const at = int(rnd, out.length - 3);
      const v = INTERESTING_U32[int(rnd, INTERESTING_U32.length)]!;
      if (rnd() < 0.5) out.writeUInt32BE(v, at);
      else out.writeUInt32LE(v, at);
      return out;
    },
  ],
  ['truncate', (b, rnd) => b.subarray(0, int(rnd, b.length))],
  [
    'insert bytes',
    (b, rnd) => {
      const at = int(rnd, b.length + 1);
      const ins = Buffer.alloc(1 + int(rnd, 16)).map(() => int(rnd, 256));
      return Buffer.concat([b.subarray(0, at), ins, b.subarray(at)]);
    },
  ],
  [
    'delete range',
    (b, rnd) => {
      const at = int(rnd, b.length);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + int(rnd, 32))]);
    },
  ],
  [
    'duplicate range',
    (b, rnd) => {
      const from = int(rnd, b.length);
      const slice = b.subarray(from, from + 1 + int(rnd, 64));
      const at = int(rnd, b.length + 1);
      return Buffer.concat([b.subarray(0, at), slice, b.subarray(at)]);
    },
  ],
  [
    'overwrite from another vector',
    (b, rnd, donor) => {
      const out = Buffer.from(b);
      const len = 1 + int(rnd, 48);
      const from = int(rnd, Math.max(1, donor.length - len));
      donor.copy(out, int(rnd, out.length), from, from + len);
      return out;
    },
  ],
  [
    'swap ranges',
    (b, rnd) => {
      const out = Buffer.from(b);
      const len = 1 + int(rnd, 16);
      const i = int(rnd, Math.max(1, out.length - len));
      const j = int(rnd, Math.max(1, out.length - len));
      const tmp = Buffer.from(out.subarray(i, i + len));
      out.copy(out, i, j, j + len);
      tmp.copy(out, j);
      return out;
    },
  ],
];

const signature = (d: DecodedLtx): string =>
  JSON.stringify([d.header, d.pages.map((p) => [p.pgno, p.data.toString('base64')]), d.trailer], (_k, v) =>
    typeof v === 'bigint' ? v.toString(16) : v,
  );

test(`LTX decoder mutation fuzz (${CASES} cases)`, { timeout: Math.max(120_000, CASES * 5) }, async () => {
  // mulberry32, seeded: every failing case reproduces from its index.
  const source = new Prng(SEED);
  const rnd = (): number => source.next();
  const files = VECTOR_NAMES.map((name) => ({ name, bytes: vectorBytes(name) }));
  const originals = new Map<string, string>();
  for (const f of files) originals.set(f.name, signature(await decodeBytes(f.bytes)));
  const outcome = { rejected: 0, identical: 0 };
  for (let i = 0; i < CASES; i++) {
    const f = files[int(rnd, files.length)]!;
    const donor = files[int(rnd, files.length)]!.bytes;
    const [kind, mutate] = MUTATORS[int(rnd, MUTATORS.length)]!;
    const bad = mutate(f.bytes, rnd, donor);
    const chunks = [1 + int(rnd, 700), 1 + int(rnd, 50)];
    let decoded: DecodedLtx;
    try {
      decoded = await decodeBytes(bad, chunks);
    } catch (e) {
      if (!hasCode(e, 'CORRUPT') && !hasCode(e, 'CHECKSUM_MISMATCH')) {
        assert.fail(
          `case ${i} (${kind} on ${f.name}) threw an untyped error: ${e instanceof Error ? e.stack : String(e)}`,
        );
      }
      outcome.rejected++;
      continue;
    }
    assert.equal(
      signature(decoded),
      originals.get(f.name),
      `case ${i} (${kind} on ${f.name}) decoded to different content`,
    );
    outcome.identical++;
  }
  assert.equal(outcome.rejected + outcome.identical, CASES);
  assert.ok(outcome.rejected > CASES / 2, `most mutations must be caught (${JSON.stringify(outcome)})`);
});
