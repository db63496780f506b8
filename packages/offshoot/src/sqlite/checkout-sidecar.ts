import { createReadStream, readFileSync, statSync, utimesSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncPath, replaceFile } from '../platform/atomic-file.js';
import { nodeCrypto } from '../platform/node-crypto.js';
import { closeRawFile, openRawFile } from './raw-file.js';
import { walBytes } from './wal-bytes.js';

/** Which durable state a checkout holds. */
export interface CheckoutIdentity {
  lineage: string;
  epoch: number;
  txid: number;
}

/**
 * The `.sum` sidecar beside a checkout. `hash` is the earlier implementation's SHA-256 fingerprint (read, and
 * trusted only after hashing); ours adds size/mtime/inode so a clean checkout is proven clean without reading it.
 */
export interface Sidecar extends CheckoutIdentity {
  hash?: string;
  /** Rolling LTX checksum of the checkout's content, hex. */
  ltx_checksum?: string;
  /**
   * The version of the `.pages` file this sidecar vouches for (page-sums.ts): 1 (no fast hashes) after a re-stamp,
   * which may have patched a version-2 file into version 1 in place; readers then take no fast hashes from the file.
   * Absent (written before it, or by a placement): whichever the file is.
   */
  pages_version?: number;
  page_size?: number;
  commit?: number;
  size?: number;
  mtime_ns?: string;
  ino?: string;
}

/** Is the checkout still exactly what its sidecar says? */
export type CleanVerdict = 'clean' | 'modified' | 'unknown';

/** The fingerprint fields of a file. */
export interface Fingerprint {
  size: number;
  mtime_ns: string;
  ino: string;
}

/** Path of the `.sum` sidecar for a checkout. */
export function sidecarPath(dbPath: string): string {
  return `${dbPath}.sum`;
}

/** Reads the sidecar; a missing or unreadable one reads as undefined ("unknown"). */
export function readSidecar(dbPath: string): Sidecar | undefined {
  try {
    const s = JSON.parse(readFileSync(sidecarPath(dbPath), 'utf8')) as Sidecar;
    if (typeof s.lineage !== 'string' || typeof s.txid !== 'number' || typeof s.epoch !== 'number') return undefined;
    return s;
  } catch {
    return undefined;
  }
}

/**
 * Writes the sidecar atomically but without fsync: a sidecar only ever vouches for content already on disk, and
 * what a crash can leave instead — no sidecar, an empty one, or an earlier one — cannot vouch for the wrong
 * content. None or an empty one reads as unknown. An earlier one names an earlier identity (every head gets a new
 * one: a flush a higher txid, a rollback or fork a new lineage), so it never proves the checkout holds the current
 * head; and it names the fingerprint the file had then, which any later write changed (SQLite stamps the current
 * time, a re-materialized checkout is a new inode), so it reads as modified; or, when a stamp only moved the mtime
 * back to the same second, as clean at that earlier identity, which no reader takes for the head.
 */
export async function writeSidecar(dbPath: string, s: Sidecar): Promise<void> {
  await replaceFile(sidecarPath(dbPath), JSON.stringify(s) + '\n');
}

/**
 * Removes the `.sum` sidecar durably (its directory fsynced when there was one): from then on, until a new one is
 * written, the checkout reads unknown, whatever its fingerprint becomes, even after a power loss. `durable: false`
 * leaves out the fsync, for a checkout no power loss can leave behind to be read (an ephemeral fork's).
 */
export async function withdrawSidecar(dbPath: string, opts: { durable?: boolean } = {}): Promise<void> {
  try {
    await unlink(sidecarPath(dbPath));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (opts.durable !== false) await fsyncPath(dirname(dbPath));
}

/** True when a file's fingerprint is the one recorded (size, mtime and inode all equal; a missing one never is). */
export function sameFingerprint(a: Fingerprint, b: Partial<Fingerprint>): boolean {
  return a.size === b.size && a.mtime_ns === b.mtime_ns && a.ino === b.ino;
}

/** Reads the current fingerprint of a file. */
export function fingerprintOf(dbPath: string): Fingerprint {
  const st = statSync(dbPath, { bigint: true });
  return { size: Number(st.size), mtime_ns: st.mtimeNs.toString(), ino: st.ino.toString() };
}

/** The current fingerprint of a file, or undefined when it cannot be read (gone, or not reachable). */
export function fingerprintIfAny(dbPath: string): Fingerprint | undefined {
  try {
    return fingerprintOf(dbPath);
  } catch {
    return undefined;
  }
}

/** True when the file still has the fingerprint recorded (a file that cannot be read never has). */
export function stillFingerprinted(dbPath: string, recorded: Partial<Fingerprint>): boolean {
  const now = fingerprintIfAny(dbPath);
  return now !== undefined && sameFingerprint(now, recorded);
}

/**
 * Moves the file's mtime a minute into the past and returns the resulting fingerprint. Any later write stamps the
 * current time, which can never equal the recorded one, so there is no racily-clean window to guard. Call it only
 * while nobody can write the file (a private temp file, or under a FrozenCheckout).
 */
export function backdateAndFingerprint(dbPath: string, now: number = Date.now()): Fingerprint {
  const past = backdatedSeconds(now);
  utimesSync(dbPath, past, past);
  return fingerprintOf(dbPath);
}

/** The mtime a stamped checkout gets: a whole second a minute back (exactly representable, so it can be planned). */
export function backdatedSeconds(now: number): number {
  return Math.floor(now / 1000) - 60;
}

/**
 * The mtime capture's stop gives a checkout: backdatedSeconds, but never the mtime its `.sum` records. The stop
 * backdates the file whatever it holds (writes not yet flushed, too) before its session stamps or marks it; were the
 * stop in the same second as the sidecar's stamp, a process killed in between would leave a checkout holding those
 * writes that matches that sidecar and reads clean.
 */
export function stopStampSeconds(dbPath: string, now: number): number {
  const past = backdatedSeconds(now);
  return readSidecar(dbPath)?.mtime_ns === (BigInt(past) * 1_000_000_000n).toString() ? past - 1 : past;
}

/** SHA-256 of a file, streamed (O(size); used only to trust a sidecar the earlier implementation wrote). */
export async function sha256File(path: string): Promise<string> {
  const h = nodeCrypto().createHash('sha256');
  const fd = openRawFile(path);
  try {
    for await (const chunk of createReadStream(path, { fd, autoClose: false, start: 0, highWaterMark: 1 << 20 }))
      h.update(chunk as Buffer);
  } finally {
    closeRawFile(fd);
  }
  return h.digest('hex');
}

/**
 * Decides whether a checkout still holds what its sidecar records: O(1) from the fingerprint (any -wal content
 * means modified); a legacy sidecar with only a hash is checked by hashing once.
 */
export async function checkClean(dbPath: string, sidecar: Sidecar | undefined): Promise<CleanVerdict> {
  if (sidecar === undefined) return 'unknown';
  let fp: Fingerprint;
  try {
    fp = fingerprintOf(dbPath);
  } catch {
    return 'unknown';
  }
  if (walBytes(dbPath) > 0) return 'modified';
  if (sidecar.mtime_ns !== undefined) {
    return sameFingerprint(fp, sidecar) ? 'clean' : 'modified';
  }
  if (sidecar.hash !== undefined) return (await sha256File(dbPath)) === sidecar.hash ? 'clean' : 'modified';
  return 'unknown';
}

/** True when the sidecar records the same durable state as the identity. */
export function sameIdentity(s: CheckoutIdentity | undefined, id: CheckoutIdentity): boolean {
  return s !== undefined && s.lineage === id.lineage && s.epoch === id.epoch && s.txid === id.txid;
}
