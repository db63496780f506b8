import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../platform/atomic-file.js';
import type { Fingerprint } from '../sqlite/checkout-sidecar.js';

/** Name of the engine's state file inside its scratch directory. */
export const CAPTURE_STATE_FILE = 'capture-state.json';

/**
 * What a capture engine persists. off and the salts are for observability only and never used to resume: only a
 * clean shutdown (clean with the main file's backdated fingerprint) lets the next engine skip its rebase.
 */
export interface CaptureState {
  off: number;
  salt1: number;
  salt2: number;
  clean: boolean;
  /** Size, mtime (set a minute into the past at the clean stop) and inode of the main file: any write changes it. */
  main_fp?: Fingerprint;
}

function isFingerprint(v: unknown): v is Fingerprint {
  if (typeof v !== 'object' || v === null) return false;
  const f = v as Record<string, unknown>;
  return (
    Number.isSafeInteger(f.size) &&
    typeof f.mtime_ns === 'string' &&
    /^-?\d+$/.test(f.mtime_ns) &&
    typeof f.ino === 'string' &&
    /^\d+$/.test(f.ino)
  );
}

/** Path of the state file in scratchDir. */
export function captureStatePath(scratchDir: string): string {
  return join(scratchDir, CAPTURE_STATE_FILE);
}

const isU32 = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 0xffffffff;

/** Reads the state file; a missing or corrupt one reads as undefined (absent), which only ever costs a rebase. */
export async function loadCaptureState(scratchDir: string): Promise<CaptureState | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(captureStatePath(scratchDir), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null) return undefined;
  const s = raw as Record<string, unknown>;
  if (
    !Number.isSafeInteger(s.off) ||
    (s.off as number) < 0 ||
    !isU32(s.salt1) ||
    !isU32(s.salt2) ||
    typeof s.clean !== 'boolean'
  ) {
    return undefined;
  }
  if (s.main_fp !== undefined && !isFingerprint(s.main_fp)) return undefined;
  const state: CaptureState = { off: s.off as number, salt1: s.salt1, salt2: s.salt2, clean: s.clean };
  if (s.main_fp !== undefined) state.main_fp = s.main_fp;
  return state;
}

/** Writes the state file atomically and durably (temp file, fsync, rename, fsync of the directory). */
export async function saveCaptureState(scratchDir: string, state: CaptureState): Promise<void> {
  await writeFileAtomic(captureStatePath(scratchDir), JSON.stringify(state) + '\n');
}
