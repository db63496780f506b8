import { fail, type ErrorCode } from '../core/errors.js';
import { CHECKSUM_FLAG } from './checksum.js';
import { isValidPageSize } from './db-file.js';

/** Size of the fixed LTX header. */
export const HEADER_SIZE = 100;

/** Header flag: the file carries no pre/post-apply checksums (the only flag v0.5.1 allows). */
export const HEADER_FLAG_NO_CHECKSUM = 0x2;

const MAGIC = 'LTX1';

/** The 100-byte LTX v0.5.1 header; every field but the checksum is a (safe-integer) number. */
export interface LtxHeader {
  flags: number;
  pageSize: number;
  /** Database size in pages after applying the file. */
  commit: number;
  minTxid: number;
  maxTxid: number;
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  /** Rolling checksum before applying; 0n for a snapshot. */
  preApplyChecksum: bigint;
  walOffset: number;
  walSize: number;
  walSalt1: number;
  walSalt2: number;
  nodeId: number;
}

/** A snapshot holds every page of the database and starts a chain (minTxid 1). */
export function isSnapshot(h: LtxHeader): boolean {
  return h.minTxid === 1;
}

/** True when the header declares that the file carries no checksums. */
export function hasNoChecksum(h: LtxHeader): boolean {
  return (h.flags & HEADER_FLAG_NO_CHECKSUM) !== 0;
}

function isUint(n: number, max: number): boolean {
  return Number.isInteger(n) && n >= 0 && n <= max;
}

/** Applies every header rule of LTX v0.5.1; `code` says whose fault a violation is (caller or file). */
function validateHeader(h: LtxHeader, code: ErrorCode): void {
  const hint =
    code === 'CORRUPT'
      ? 'the LTX file is damaged or not an LTX v0.5.1 file; re-fetch or re-create it'
      : 'pass a header that satisfies the LTX v0.5.1 rules';
  const bad = (what: string): never => {
    throw fail(code, `invalid LTX header: ${what}`, { hint });
  };
  if (!isUint(h.flags, 0xffffffff) || (h.flags & ~HEADER_FLAG_NO_CHECKSUM) !== 0)
    bad(`flags 0x${h.flags.toString(16)}`);
  if (!isValidPageSize(h.pageSize)) bad(`page size ${h.pageSize}`);
  if (!isUint(h.commit, 0xffffffff)) bad(`commit ${h.commit}`);
  for (const [name, v] of [
    ['minTxid', h.minTxid],
    ['maxTxid', h.maxTxid],
    ['nodeId', h.nodeId],
    ['walOffset', h.walOffset],
    ['walSize', h.walSize],
  ] as const) {
    if (!isUint(v, Number.MAX_SAFE_INTEGER)) bad(`${name} ${v}`);
  }
  if (!Number.isSafeInteger(h.timestamp)) bad(`timestamp ${h.timestamp}`);
  if (!isUint(h.walSalt1, 0xffffffff) || !isUint(h.walSalt2, 0xffffffff)) bad('wal salts out of range');
  if (h.minTxid === 0 || h.maxTxid === 0) bad('txids must be non-zero');
  if (h.minTxid > h.maxTxid) bad(`minTxid ${h.minTxid} > maxTxid ${h.maxTxid}`);
  if ((h.walSalt1 !== 0 || h.walSalt2 !== 0) && h.walOffset === 0) bad('wal salts set without a wal offset');
  if (h.walSize !== 0 && h.walOffset === 0) bad('wal size set without a wal offset');
  const pre = h.preApplyChecksum;
  if (typeof pre !== 'bigint' || pre < 0n || pre >= 1n << 64n) bad('pre-apply checksum out of range');
  if (isSnapshot(h)) {
    if (pre !== 0n) bad('a snapshot must have a zero pre-apply checksum');
  } else if (hasNoChecksum(h)) {
    if (pre !== 0n) bad('pre-apply checksum set on a no-checksum file');
  } else if ((pre & CHECKSUM_FLAG) === 0n) {
    bad('pre-apply checksum must be non-zero with bit 63 set');
  }
}

/** Serializes a header to its 100 bytes, refusing (INVALID_ARGUMENT) anything v0.5.1 would refuse. */
export function encodeHeader(h: LtxHeader): Buffer {
  validateHeader(h, 'INVALID_ARGUMENT');
  const b = Buffer.alloc(HEADER_SIZE);
  b.write(MAGIC, 0, 'latin1');
  b.writeUInt32BE(h.flags, 4);
  b.writeUInt32BE(h.pageSize, 8);
  b.writeUInt32BE(h.commit, 12);
  b.writeBigUInt64BE(BigInt(h.minTxid), 16);
  b.writeBigUInt64BE(BigInt(h.maxTxid), 24);
  b.writeBigInt64BE(BigInt(h.timestamp), 32);
  b.writeBigUInt64BE(h.preApplyChecksum, 40);
  b.writeBigInt64BE(BigInt(h.walOffset), 48);
  b.writeBigInt64BE(BigInt(h.walSize), 56);
  b.writeUInt32BE(h.walSalt1, 64);
  b.writeUInt32BE(h.walSalt2, 68);
  b.writeBigUInt64BE(BigInt(h.nodeId), 72);
  return b;
}

/** Parses and validates a 100-byte header; any violation is CORRUPT. */
export function decodeHeader(buf: Uint8Array): LtxHeader {
  if (buf.length < HEADER_SIZE) {
    throw fail('CORRUPT', `LTX header truncated: ${buf.length} of ${HEADER_SIZE} bytes`, {
      hint: 'the LTX file is damaged; re-fetch or re-create it',
    });
  }
  const b = Buffer.from(buf.buffer, buf.byteOffset, HEADER_SIZE);
  if (b.toString('latin1', 0, 4) !== MAGIC) {
    throw fail('CORRUPT', 'not an LTX file (bad magic)', {
      hint: 'the LTX file is damaged or of another format; re-fetch or re-create it',
    });
  }
  const num = (v: bigint): number =>
    v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER) ? Number.NaN : Number(v);
  const h: LtxHeader = {
    flags: b.readUInt32BE(4),
    pageSize: b.readUInt32BE(8),
    commit: b.readUInt32BE(12),
    minTxid: num(b.readBigUInt64BE(16)),
    maxTxid: num(b.readBigUInt64BE(24)),
    timestamp: num(b.readBigInt64BE(32)),
    preApplyChecksum: b.readBigUInt64BE(40),
    walOffset: num(b.readBigInt64BE(48)),
    walSize: num(b.readBigInt64BE(56)),
    walSalt1: b.readUInt32BE(64),
    walSalt2: b.readUInt32BE(68),
    nodeId: num(b.readBigUInt64BE(72)),
  };
  validateHeader(h, 'CORRUPT');
  return h;
}

/** The fields a writer chooses; offshoot writes no flags, no WAL position and node 0. */
export type HeaderFields = Pick<
  LtxHeader,
  'pageSize' | 'commit' | 'minTxid' | 'maxTxid' | 'timestamp' | 'preApplyChecksum'
>;

/** A header with offshoot's conventions around the fields a writer chooses. */
export function offshootHeader(f: HeaderFields): LtxHeader {
  return { flags: 0, ...f, walOffset: 0, walSize: 0, walSalt1: 0, walSalt2: 0, nodeId: 0 };
}
