import { existsSync, fsync, utimesSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dbFileFd, releaseDbFiles } from '../capture/db-file-cache.js';
import { CaptureEngine } from '../capture/engine.js';
import type { OffshootError } from '../core/errors.js';
import type { Ref } from '../core/ref.js';
import { fsyncDatabase } from '../sqlite/sync-database.js';
import { type Fingerprint, type Sidecar, stillFingerprinted } from '../sqlite/checkout-sidecar.js';
import { walBytes } from '../sqlite/wal-bytes.js';
import { dropKept } from '../sqlite/kept-connection.js';
import type { PageSums } from '../sqlite/page-sums.js';
import { headBaseline } from './clean-proof.js';
import { SessionSink } from './session-sink.js';

/** A checkout under capture: the engine, the sink it feeds, and the private directory of both. */
export interface LiveCapture {
  engine: CaptureEngine;
  sink: SessionSink;
  dir: string;
}

/** What starting capture needs besides the checkout and the ref whose head it should hold. */
export interface CaptureStart {
  /**
   * A fresh directory for this capture's files, not yet made, in an existing parent (the session's scratch holds one
   * per start and is swept when a daemon starts, so no capture ever starts from what a crashed one left).
   */
  dir: string;
  log: (m: string) => void;
  onFailure: (err: OffshootError) => void;
  /**
   * The fingerprint capture left the checkout with when it last stopped settled on the head: the file still having
   * it proves the checkout untouched since, whatever its sidecars' own fingerprint says.
   */
  since?: Fingerprint;
  /** The sidecars the caller itself just put at the path with the checkout (a placed staged one): not read back. */
  written?: { sidecar: Sidecar; sums: PageSums };
  /** The checkout need not reach the disk (an ephemeral fork's): capture's checkpoints never sync it. */
  unsynced?: boolean;
}

/**
 * Starts capturing path, which should hold the ref's head. When the sidecar proves it does (O(1)), capture starts
 * without reading the file; when the sidecar still describes the head but the file has changed since (a foreign
 * commit while nobody captured; `since` proves it unchanged instead when given), the head's page sums are the baseline and the engine's rebase finds the pages that
 * differ, so the next flush is a segment of those; else the rebase starts from nothing and the next flush is a
 * snapshot. Nothing committed to the checkout is ever left out: whatever capture cannot prove, it copies.
 */
export async function startCapture(path: string, ref: Ref, s: CaptureStart): Promise<LiveCapture> {
  // A directory of its own that no engine used before (EEXIST otherwise): its state file is never resumed from, so
  // the engine writes it without fsync.
  await mkdir(s.dir);
  // Capture holds the checkout's connections from here: one kept since a close (and the descriptors shared with it)
  // goes first, so that stopping capture gives back every descriptor of this process on the file.
  dropKept(path);
  const sink = new SessionSink(s.dir);
  const baseline = await headBaseline(path, ref, s.written);
  if (baseline) sink.seedClean(baseline.sums, baseline.checksum);
  const since = s.since;
  const stillClean = since === undefined ? baseline?.stillClean : () => stillFingerprinted(path, since);
  const engine = new CaptureEngine({
    dbPath: path,
    scratchDir: join(s.dir, 'engine'),
    volatileState: true,
    ...(s.unsynced === true ? { unsynced: true } : {}),
    sink,
    log: s.log,
    onFailure: s.onFailure,
    ...(baseline && stillClean ? { provenClean: stillClean } : {}),
  });
  try {
    await engine.start();
  } catch (err) {
    releaseDbFiles(path);
    await rm(s.dir, { recursive: true, force: true });
    throw err;
  }
  return { engine, sink, dir: s.dir };
}

/** How a stopped capture left its checkout. */
export interface StoppedCapture {
  /** True when the engine proved it captured everything, and the sink has nothing pending. */
  settled: boolean;
  /** The main file's fingerprint as capture left it (only when settled): any later change shows against it. */
  fingerprint: Fingerprint | undefined;
  /**
   * The same fingerprint when the engine proved it captured everything, whatever the sink still holds: settled
   * once the sink has flushed it all.
   */
  proven: Fingerprint | undefined;
}

/**
 * Stops capture and gives up every descriptor it held on the checkout (no connection of this process is left on
 * it), keeping the sink for the caller to stamp the checkout with. `beforeBackdate` is awaited before the stop
 * backdates the checkout (see CaptureEngine.stop). With `keep` (a session's close), a clean stop leaves its main
 * connection with the process's kept connections for the checkout's next reader instead (see keepConnections).
 */
export async function stopCapture(
  path: string,
  cap: LiveCapture,
  opts: { beforeBackdate?: Promise<unknown>; keep?: boolean } = {},
): Promise<StoppedCapture> {
  const { clean, kept } = await cap.engine.stop(opts);
  if (kept !== true) releaseDbFiles(path);
  const proven = clean ? cap.engine.stoppedFingerprint : undefined;
  const fingerprint = cap.sink.dirty ? undefined : proven;
  return { settled: fingerprint !== undefined, fingerprint, proven };
}

/**
 * Sets the checkout's mtime to now after capture stopped without proving it holds the durable head: every sidecar
 * records an mtime a minute back, so none can match it, and the checkout reads modified until stamped again. Capture's
 * stop backdates the file whatever it holds, which could otherwise match the sidecars it was opened with.
 */
export function markUnproven(path: string): void {
  try {
    const now = new Date();
    utimesSync(path, now, now);
  } catch {
    // A checkout that is gone reads as absent, which proves nothing either.
  }
}

/**
 * True when the checkout may hold commits capture has not seen since it left it with `fingerprint` (O(1): stats
 * only, no descriptor kept): the main file changed, the -wal holds frames, or a rollback journal appeared. Without a
 * fingerprint nothing is proven, so it may.
 */
export function changedSince(path: string, fingerprint: Fingerprint | undefined): boolean {
  if (fingerprint === undefined) return true;
  if (walBytes(path) > 0 || existsSync(`${path}-journal`)) return true;
  return !stillFingerprinted(path, fingerprint);
}

const fsyncFd = promisify(fsync);

/**
 * Puts a checkout on the disk, and has its capture, if any, sync it from now on (an ephemeral fork was kept): through
 * the descriptor the process already shares for the file while capture holds connections on it.
 */
export async function syncCheckout(path: string, cap: LiveCapture | undefined): Promise<void> {
  if (cap === undefined) return fsyncDatabase(path);
  cap.engine.syncCheckout();
  await fsyncFd(dbFileFd(path));
}
