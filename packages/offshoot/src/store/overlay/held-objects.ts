import { constants as fsc, readFileSync, rmSync } from 'node:fs';
import { copyFile, link, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Body } from '../backend.js';

/** One object an overlay holds: its bytes in memory, or (a body handed over as a file) in a scratch file. */
export interface HeldObject {
  readonly etag: string;
  readonly size: number;
  readonly bytes?: Buffer;
  readonly file?: string;
}

/**
 * The objects an overlay holds instead of its backend, by key: small bodies in memory, file bodies (snapshots, flushed
 * segments) as a hard link or copy in a scratch directory that is never fsynced, since nothing held is durable by
 * design. Etags are the overlay's own (`"held-N"`), never a backend's.
 */
export class HeldObjects {
  private readonly map = new Map<string, HeldObject>();
  private seq = 0;
  private files = 0;

  constructor(private readonly scratch: string) {}

  /** The object at key, if held. */
  get(key: string): HeldObject | undefined {
    return this.map.get(key);
  }

  /** Every held key, in no order. */
  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** How many objects are held. */
  get size(): number {
    return this.map.size;
  }

  /** A held object of in-memory bytes, not yet at any key. */
  prepareBytes(bytes: Uint8Array): HeldObject {
    return { etag: this.nextEtag(), size: bytes.byteLength, bytes: Buffer.from(bytes) };
  }

  /**
   * A held object of a file body, not yet at any key: linked (or copied) into the scratch directory, so the caller's
   * file may go as soon as the put returns.
   */
  async prepareFile(body: { file: string; handOver?: true }): Promise<HeldObject> {
    await mkdir(this.scratch, { recursive: true });
    const file = join(this.scratch, `object-${process.pid}-${++this.files}`);
    // A handed-over file is never written again, so it may be shared; any other is the caller's to rewrite.
    if (body.handOver === true)
      await link(body.file, file).catch(() => copyFile(body.file, file, fsc.COPYFILE_FICLONE));
    else await copyFile(body.file, file, fsc.COPYFILE_FICLONE);
    return { etag: this.nextEtag(), size: (await stat(file)).size, file };
  }

  /** A fresh path in the scratch directory, for a file on its way in. */
  async scratchFile(): Promise<string> {
    await mkdir(this.scratch, { recursive: true });
    return join(this.scratch, `incoming-${process.pid}-${++this.files}`);
  }

  private nextEtag(): string {
    return `"held-${++this.seq}"`;
  }

  /** Puts a prepared object at key, replacing (and releasing) whatever was held there. */
  set(key: string, o: HeldObject): void {
    const was = this.map.get(key);
    this.map.set(key, o);
    if (was !== undefined && was !== o) release(was);
  }

  /** Drops the object at key; true when there was one. */
  delete(key: string): boolean {
    const was = this.map.get(key);
    if (was === undefined) return false;
    this.map.delete(key);
    release(was);
    return true;
  }

  /** Drops every object held, and the scratch directory. */
  clear(): void {
    this.map.clear();
    rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** A held object's bytes. */
export function heldBytes(o: HeldObject): Buffer {
  return o.bytes ?? readFileSync(o.file as string);
}

/** What a put of a held object to a backend sends: its bytes, or its scratch file (never handed over: it stays ours). */
export function heldBody(o: HeldObject): Body {
  return o.bytes ?? { file: o.file as string };
}

/** A prepared object that never took a key: its scratch file goes. */
export function release(o: HeldObject): void {
  if (o.file !== undefined) rmSync(o.file, { force: true });
}
