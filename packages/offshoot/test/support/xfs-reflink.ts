// A loop-mounted XFS filesystem with reflink=1 in a temp directory, for the suites and benches that prove checkouts
// share blocks (ext4 and tmpfs cannot). Needs root and xfsprogs (scripts/reflink-env.sh installs it; make test runs it).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SBIN = ['/usr/sbin', '/sbin'];

function tool(name: string): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(':'), ...SBIN]) {
    const p = path.join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * Why an XFS reflink mount cannot be made here, or undefined. Under CI=true a missing prerequisite is a failure,
 * never a skip.
 */
export function reflinkMountMissing(): string | undefined {
  let why: string | undefined;
  if (process.getuid?.() !== 0) why = 'mounting a loop XFS needs root';
  else if (tool('mkfs.xfs') === undefined) why = 'mkfs.xfs is missing: run scripts/reflink-env.sh (make test does)';
  else if (tool('filefrag') === undefined) why = 'filefrag (e2fsprogs) is missing';
  if (why !== undefined && process.env.CI === 'true') assert.fail(why);
  return why;
}

/** A mounted XFS with reflink; `unmount` detaches it and removes the image (idempotent). */
export interface ReflinkMount {
  /** The mount point, empty and writable. */
  dir: string;
  unmount(): void;
}

const mounted = new Set<ReflinkMount>();
// A suite that throws past its own clean-up must not leave a mount behind once its process ends.
process.once('exit', () => {
  for (const m of mounted) m.unmount();
});

/**
 * Makes a sparse image of `mib` MiB (xfsprogs needs about 300), formats it with reflink=1 and loop-mounts it on a
 * fresh temp directory.
 */
export function mountReflinkXfs(mib = 1024): ReflinkMount {
  const base = mkdtempSync(path.join(os.tmpdir(), 'offshoot-xfs-'));
  const img = path.join(base, 'xfs.img');
  const dir = path.join(base, 'mnt');
  mkdirSync(dir);
  let isMounted = false;
  const m: ReflinkMount = {
    dir,
    unmount: () => {
      if (isMounted && spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
      isMounted = false;
      mounted.delete(m);
      rmSync(base, { recursive: true, force: true });
    },
  };
  try {
    execFileSync('truncate', ['-s', `${mib}M`, img]);
    execFileSync(tool('mkfs.xfs') ?? 'mkfs.xfs', ['-q', '-m', 'reflink=1', img]);
    execFileSync('mount', ['-o', 'loop', img, dir]);
    isMounted = true;
    mounted.add(m);
  } catch (err) {
    m.unmount();
    throw err;
  }
  return m;
}

/** Extents of a file as `filefrag -v` reports them: physical start, length in blocks, and whether each is shared. */
export interface Extent {
  physical: number;
  length: number;
  shared: boolean;
}

/** The file's extents by FIEMAP (`filefrag -v`). */
export function extentsOf(file: string): Extent[] {
  const out = execFileSync(tool('filefrag') ?? 'filefrag', ['-v', file], { encoding: 'utf8' });
  const extents: Extent[] = [];
  // "   0:        0..    2559:         24..      2583:   2560:             shared,last,eof"
  for (const line of out.split('\n')) {
    const m = /^\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*\d+:\s+(\d+):\s*(.*)$/.exec(line);
    if (m) extents.push({ physical: Number(m[1]), length: Number(m[2]), shared: /\bshared\b/.test(m[3] ?? '') });
  }
  return extents;
}

/** Blocks of the file that FIEMAP reports shared with another file, and its total. */
export function sharedBlocks(file: string): { shared: number; total: number } {
  let shared = 0;
  let total = 0;
  for (const e of extentsOf(file)) {
    total += e.length;
    if (e.shared) shared += e.length;
  }
  return { shared, total };
}

/** Used bytes of the filesystem holding `dir`, after a sync (delayed allocation would hide new blocks). */
export function usedBytes(dir: string): number {
  execFileSync('sync', ['-f', dir]);
  const out = execFileSync('df', ['-B1', '--output=used', dir], { encoding: 'utf8' });
  return Number(out.trim().split('\n').pop());
}
