import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dbFileFd } from '../../src/capture/db-file-cache.js';
import { copyMainFile } from '../../src/capture/main-file.js';

test("one descriptor per inode, revalidated by path, and a replaced file's descriptor is never closed", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const file = path.join(dir, 'a.db');
    fs.writeFileSync(file, Buffer.alloc(8192, 1));
    const fd = dbFileFd(file);
    assert.equal(dbFileFd(file), fd, 'the same inode reuses the same descriptor');
    assert.equal(dbFileFd(path.join(dir, '.', 'a.db')), fd, 'the same file by another spelling too');
    assert.equal(fs.fstatSync(fd).ino, fs.statSync(file).ino);

    const replacement = path.join(dir, 'b.db');
    fs.writeFileSync(replacement, Buffer.alloc(4096, 2));
    fs.renameSync(replacement, file);
    const fresh = dbFileFd(file);
    assert.notEqual(fresh, fd, 'a new inode at the path gets a new descriptor');
    assert.equal(fs.fstatSync(fresh).size, 4096);
    assert.equal(fs.fstatSync(fd).size, 8192, 'the stale descriptor was leaked, not closed');

    const copy = path.join(dir, 'copy.db');
    assert.equal(await copyMainFile(file, copy), 4096);
    assert.ok(fs.readFileSync(copy).equals(Buffer.alloc(4096, 2)));
    assert.throws(() => dbFileFd(path.join(dir, 'missing.db')), { code: 'NOT_FOUND' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('copy handles files larger than one read chunk', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const file = path.join(dir, 'big.db');
    const data = Buffer.alloc(3 * (1 << 20) + 4096);
    for (let i = 0; i < data.length; i += 4096) data.writeUInt32BE(i, i);
    fs.writeFileSync(file, data);
    const copy = path.join(dir, 'copy.db');
    assert.equal(await copyMainFile(file, copy), data.length);
    assert.ok(fs.readFileSync(copy).equals(data));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the descriptors of files gone from their path are closed, so a long-lived daemon does not leak one per checkout', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  const open = (): number => fs.readdirSync('/proc/self/fd').length;
  try {
    const before = open();
    for (let i = 0; i < 8; i++) {
      const file = path.join(dir, `gone-${i}.db`);
      fs.writeFileSync(file, Buffer.alloc(4096));
      dbFileFd(file);
      fs.rmSync(file);
    }
    const kept = path.join(dir, 'kept.db');
    fs.writeFileSync(kept, Buffer.alloc(4096));
    const keptFd = dbFileFd(kept);
    // Enough new files that a sweep runs.
    for (let i = 0; i < 40; i++) {
      const file = path.join(dir, `new-${i}.db`);
      fs.writeFileSync(file, Buffer.alloc(4096));
      dbFileFd(file);
    }
    // 41 files are still there; a leak would hold the 8 gone ones too (49).
    assert.ok(open() - before <= 43, `${open() - before} more descriptors open for 41 files`);
    assert.equal(dbFileFd(kept), keptFd, 'a file still there keeps its descriptor');
    assert.equal(fs.fstatSync(keptFd).size, 4096);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
