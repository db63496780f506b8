import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import type { KeyText } from '../backend.js';

// How long every directory of a tree must have gone unchanged (by mtime) before its listing is indexed. A
// directory's mtime comes from the kernel's coarse clock, so a change in the same tick as the one before it can
// leave the mtime as it was: a listing read within a tick of a change could miss the next one without a trace. Two
// seconds is more than any tick, and more than the timestamp resolution of the filesystems that keep whole seconds.
// Any change after an older mtime moves it; the ctime kept beside it catches an mtime set back by hand.
const QUIET_MS = 2000;

// A directory as stat'd just before its listing was read: where it is, which inode, and its mtime and ctime in
// nanoseconds. Every writer replaces a file by renaming over it (ours and the earlier implementation's), and adding,
// removing or renaming over an entry moves its directory's mtime and ctime; a directory made anew is another inode.
type DirStamp = [path: string, dev: string, ino: string, mtimeNs: string, ctimeNs: string];

interface IndexFile {
  version: 1;
  dirs: DirStamp[];
  keys: string[];
  texts: string[];
}

function stampOf(path: string): DirStamp | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return s.isDirectory() ? [path, String(s.dev), String(s.ino), String(s.mtimeNs), String(s.ctimeNs)] : undefined;
  } catch {
    return undefined;
  }
}

function unchanged(d: DirStamp): boolean {
  const now = stampOf(d[0]);
  return now?.every((v, i) => v === d[i]) === true;
}

// The index of the tree at treeDir, or undefined. One written for another tree (a store copied with its index, or
// moved) names other directories, and is not this tree's however those directories stand.
function loadIndex(file: string, treeDir: string): IndexFile | undefined {
  try {
    const idx = JSON.parse(readFileSync(file, 'utf8')) as IndexFile;
    const whole =
      idx.version === 1 &&
      Array.isArray(idx.dirs) &&
      idx.dirs[0]?.[0] === treeDir &&
      idx.dirs.every((d) => d[0] === treeDir || d[0].startsWith(`${treeDir}${sep}`)) &&
      Array.isArray(idx.keys) &&
      Array.isArray(idx.texts) &&
      idx.keys.length === idx.texts.length;
    return whole ? idx : undefined;
  } catch {
    return undefined;
  }
}

// Written to a temp file and renamed over the index, without fsync: an index lost or torn by a crash fails to
// parse or to match its directories, and is read around and written again. A failed write only costs speed.
function saveIndex(file: string, idx: IndexFile): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(tmp, JSON.stringify(idx));
    renameSync(tmp, file);
  } catch {
    rmSync(tmp, { force: true });
  }
}

// A tree that is gone leaves no index behind.
function dropIndex(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // Left in place it is harmless: it matches no directory.
  }
}

/**
 * Every key of the directory tree at treeDir with its text, served from an index file while each of the tree's
 * directories is the one it was when the index was written (one stat each, however many files), else listed and read
 * anew. `list` walks the tree from treeDir, calling `onDir` just before it reads each directory; `read` reads the keys
 * it found. A new index
 * is written only when no directory changed while it was read, none had changed in the QUIET_MS before, and every
 * text passes `indexable`: a file that is not what it should be (a torn ref, say) is read anew every time, so its
 * repair shows at once however it is written.
 */
export async function indexedTexts(
  indexFile: string,
  treeDir: string,
  list: (onDir: (dir: string) => void) => Promise<string[]>,
  read: (keys: string[]) => Promise<Array<string | undefined>>,
  indexable: (text: string) => boolean,
): Promise<KeyText[]> {
  const idx = loadIndex(indexFile, treeDir);
  if (idx?.dirs.every(unchanged)) return idx.keys.map((key, i) => ({ key, text: idx.texts[i] as string }));
  const quietBefore = BigInt(Date.now() - QUIET_MS) * 1_000_000n;
  const dirs: DirStamp[] = [];
  let stamped = true;
  const keys = await list((dir) => {
    const d = stampOf(dir);
    if (d === undefined) stamped = false;
    else dirs.push(d);
  });
  const texts = await read(keys);
  const out: KeyText[] = [];
  for (let i = 0; i < keys.length; i++) {
    const text = texts[i];
    if (text !== undefined) out.push({ key: keys[i] as string, text });
  }
  if (dirs.length === 0) dropIndex(indexFile);
  else if (
    stamped &&
    out.length === keys.length &&
    dirs.every((d) => BigInt(d[3]) < quietBefore) &&
    out.every((o) => indexable(o.text)) &&
    dirs.every(unchanged)
  ) {
    saveIndex(indexFile, { version: 1, dirs, keys: out.map((o) => o.key), texts: out.map((o) => o.text) });
  }
  return out;
}
