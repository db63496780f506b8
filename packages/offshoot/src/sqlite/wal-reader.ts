import { closeSync, openSync, readSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { OffshootError, fail, hasCode } from '../core/errors.js';
import { walChecksum } from './wal-checksum.js';
import {
  WAL_FRAME_HEADER_SIZE,
  WAL_HEADER_SIZE,
  isValidPageSize,
  parseWalHeader,
  type WalHeader,
} from './wal-header.js';

/** One page image from a WAL frame; data is a private copy that nothing else references. */
export interface WalFrame {
  pgno: number;
  data: Buffer;
}

/** One committed transaction, frames in WAL order (a page written twice: the later frame wins). */
export interface WalTransaction {
  frames: WalFrame[];
  /** Database size in pages after the commit. */
  commitSize: number;
  /** The byte after the commit frame: where the next transaction starts. */
  endOffset: number;
}

/** The salt pair that identifies one WAL generation. */
export interface WalSalts {
  salt1: number;
  salt2: number;
}

/** Everything committed in a -wal, scanned from its first frame. */
export interface WalScan {
  header: WalHeader | undefined;
  transactions: WalTransaction[];
  /** The byte after the last valid commit frame; 0 when the WAL has no valid header. */
  endOffset: number;
}

// Small transactions are the common case, so reads (and the buffer they fill) start small and double up to the cap:
// a backlog of one-frame commits never re-reads a megabyte per transaction, and a session that writes ten rows never
// allocates one.
const FIRST_READ_FRAMES = 4;
const MAX_READ_BYTES = 1 << 20;

const hex = (n: number): string => n.toString(16).padStart(8, '0');

/** Thrown by WalReader.next() when the -wal header salts no longer match the generation the reader is bound to. */
export class WalRestartedError extends OffshootError {
  /** Marker checked by isWalRestarted, so detection works by property rather than class identity. */
  readonly walRestarted = true;
  /** Salts of the generation the reader was bound to. */
  readonly previous: WalSalts;
  /** Salts now in the -wal header. */
  readonly current: WalSalts;

  constructor(walPath: string, previous: WalSalts, current: WalSalts) {
    super(
      'UNAVAILABLE',
      `WAL ${walPath} was restarted: salts ${hex(previous.salt1)}/${hex(previous.salt2)} became ` +
        `${hex(current.salt1)}/${hex(current.salt2)}`,
      {
        hint: 'bind a fresh WalReader to the new generation if this restart was expected, otherwise rebase from the main database',
      },
    );
    this.name = 'WalRestartedError';
    this.previous = previous;
    this.current = current;
  }
}

/** True when err reports that the WAL was reset under a bound WalReader. */
export function isWalRestarted(err: unknown): boolean {
  return hasCode(err, 'UNAVAILABLE') && (err as { walRestarted?: unknown }).walRestarted === true;
}

/**
 * Reads committed transactions from a live -wal, one per next() call. It binds to the first valid header it
 * sees (always at frame 1, seeded with the header checksum) and only a complete, valid transaction moves it.
 * It opens and closes the -wal on every call, which is safe because SQLite takes no fcntl locks on -wal;
 * it never touches the main database file, whose locks a raw close would drop. Reads are synchronous: a capture
 * reads one small transaction at a time from the page cache, where a thread-pool round trip per call cost more
 * than the read; a transaction larger than one read yields to the event loop between reads.
 */
export class WalReader {
  /** Path of the -wal file being read. */
  readonly walPath: string;
  readonly #expectedPageSize: number | undefined;
  #header: WalHeader | undefined;
  #offset = 0;
  #s1 = 0;
  #s2 = 0;
  #framesRead = 0;
  #scratch: Buffer | undefined;

  /** expectedPageSize is the database's `PRAGMA page_size`; a WAL with another page size is a fatal error. */
  constructor(walPath: string, expectedPageSize?: number) {
    if (expectedPageSize !== undefined && !isValidPageSize(expectedPageSize)) {
      throw fail('INVALID_ARGUMENT', `invalid expected page size ${expectedPageSize}`, {
        hint: 'pass the value of PRAGMA page_size: a power of two from 512 to 65536',
      });
    }
    this.walPath = walPath;
    this.#expectedPageSize = expectedPageSize;
  }

  /** True once a valid header has been seen; the reader stays on that generation for life. */
  get bound(): boolean {
    return this.#header !== undefined;
  }

  /** Byte offset of the next unread frame: 32 right after binding, 0 while unbound. */
  get offset(): number {
    return this.#offset;
  }

  /** Salts of the bound generation, or undefined while unbound. */
  get salts(): WalSalts | undefined {
    return this.#header === undefined ? undefined : { salt1: this.#header.salt1, salt2: this.#header.salt2 };
  }

  /** Frames consumed so far, i.e. in every transaction next() has returned. */
  get framesRead(): number {
    return this.#framesRead;
  }

  /** Page size of the bound generation, or undefined while unbound. */
  get pageSize(): number | undefined {
    return this.#header?.pageSize;
  }

  /** The header the reader bound to, or undefined while unbound. */
  get header(): WalHeader | undefined {
    return this.#header;
  }

  /**
   * Returns the next committed transaction, or undefined when none is complete yet (missing file, invalid
   * header, torn tail, stale or uncommitted frames). Throws WalRestartedError when the WAL was reset.
   */
  async next(): Promise<WalTransaction | undefined> {
    const steps = this.#steps();
    for (;;) {
      const step = this.#advance(steps);
      if (step.done === true) return step.value;
      await yieldToLoop();
    }
  }

  /**
   * next() without yielding to the event loop between the reads of a large transaction: for a caller that holds a
   * lock no other code on this thread may wait for.
   */
  nextSync(): WalTransaction | undefined {
    const steps = this.#steps();
    for (;;) {
      const step = this.#advance(steps);
      if (step.done === true) return step.value;
    }
  }

  #advance(steps: Generator<void, WalTransaction | undefined>): IteratorResult<void, WalTransaction | undefined> {
    try {
      return steps.next();
    } catch (err) {
      if (err instanceof OffshootError) throw err;
      throw fail('IO', `cannot read WAL ${this.walPath}: ${(err as Error).message}`, {
        hint: 'check that the -wal file is readable by this process',
        cause: err,
      });
    }
  }

  // Yields between the reads of a transaction larger than one read; returns it (or undefined) at the end.
  *#steps(): Generator<void, WalTransaction | undefined> {
    let fd: number;
    try {
      fd = openSync(this.walPath, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const head = Buffer.alloc(WAL_HEADER_SIZE);
      const bytesRead = readSync(fd, head, 0, WAL_HEADER_SIZE, 0);
      const header = parseWalHeader(head.subarray(0, bytesRead));
      if (header === undefined) return undefined;
      const bound = this.#header ?? this.#bind(header);
      if (header.salt1 !== bound.salt1 || header.salt2 !== bound.salt2) {
        const previous = { salt1: bound.salt1, salt2: bound.salt2 };
        throw new WalRestartedError(this.walPath, previous, { salt1: header.salt1, salt2: header.salt2 });
      }
      if (header.pageSize !== bound.pageSize) throw this.#pageSizeMismatch(header.pageSize, bound.pageSize);
      return yield* this.#readTransaction(fd, bound);
    } finally {
      closeSync(fd);
    }
  }

  #bind(header: WalHeader): WalHeader {
    const expected = this.#expectedPageSize;
    if (expected !== undefined && header.pageSize !== expected) throw this.#pageSizeMismatch(header.pageSize, expected);
    this.#header = Object.freeze(header);
    this.#offset = WAL_HEADER_SIZE;
    this.#s1 = header.checksum1;
    this.#s2 = header.checksum2;
    return header;
  }

  #pageSizeMismatch(walPageSize: number, dbPageSize: number): OffshootError {
    return fail('CORRUPT', `WAL ${this.walPath} has page size ${walPageSize}, expected ${dbPageSize}`, {
      hint: 'SQLite cannot change the page size in WAL mode, so this -wal does not belong to the database: stop and rebase from the main database file',
    });
  }

  /** The reused read buffer, grown to at least n bytes. */
  #scratchFor(n: number): Buffer {
    if (this.#scratch === undefined || this.#scratch.length < n) this.#scratch = Buffer.allocUnsafeSlow(n);
    return this.#scratch;
  }

  // Works on local copies of the position and checksum and commits them only at a commit frame, so a torn,
  // stale or uncommitted tail leaves the reader exactly where it was.
  *#readTransaction(fd: number, header: WalHeader): Generator<void, WalTransaction | undefined> {
    const pageSize = header.pageSize;
    const frameSize = WAL_FRAME_HEADER_SIZE + pageSize;
    const maxFrames = Math.max(1, Math.floor(MAX_READ_BYTES / frameSize));
    const bigEndian = header.bigEndianChecksum;
    const frames: WalFrame[] = [];
    let pos = this.#offset;
    let s1 = this.#s1;
    let s2 = this.#s2;
    let want = Math.min(FIRST_READ_FRAMES, maxFrames);
    for (let reads = 0; ; reads++) {
      if (reads > 0) yield;
      const scratch = this.#scratchFor(want * frameSize);
      const bytesRead = readSync(fd, scratch, 0, want * frameSize, pos);
      const whole = Math.floor(bytesRead / frameSize);
      if (whole === 0) return undefined;
      for (let k = 0; k < whole; k++) {
        const frame = scratch.subarray(k * frameSize, (k + 1) * frameSize);
        const pgno = frame.readUInt32BE(0);
        const commitSize = frame.readUInt32BE(4);
        // SQLite's own recovery also ends the log at a frame claiming page 0.
        if (pgno === 0) return undefined;
        if (frame.readUInt32BE(8) !== header.salt1 || frame.readUInt32BE(12) !== header.salt2) return undefined;
        [s1, s2] = walChecksum(frame.subarray(0, 8), bigEndian, s1, s2);
        [s1, s2] = walChecksum(frame.subarray(WAL_FRAME_HEADER_SIZE), bigEndian, s1, s2);
        if (s1 !== frame.readUInt32BE(16) || s2 !== frame.readUInt32BE(20)) return undefined;
        // The scratch buffer is reused by the next read, and a pooled Buffer would share memory with
        // unrelated allocations: every page gets its own backing store.
        const data = Buffer.allocUnsafeSlow(pageSize);
        frame.copy(data, 0, WAL_FRAME_HEADER_SIZE);
        frames.push({ pgno, data });
        pos += frameSize;
        if (commitSize !== 0) {
          this.#offset = pos;
          this.#s1 = s1;
          this.#s2 = s2;
          this.#framesRead += frames.length;
          return { frames, commitSize, endOffset: pos };
        }
      }
      want = Math.min(want * 2, maxFrames);
    }
  }
}

/** Scans a -wal from its first frame: every committed transaction and the valid end offset. */
export async function readAllTransactions(walPath: string, expectedPageSize?: number): Promise<WalScan> {
  const reader = new WalReader(walPath, expectedPageSize);
  const transactions: WalTransaction[] = [];
  for (let txn = await reader.next(); txn !== undefined; txn = await reader.next()) transactions.push(txn);
  return { header: reader.header, transactions, endOffset: reader.offset };
}
