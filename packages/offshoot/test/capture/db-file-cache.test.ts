import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dbFileFd, releaseDbFiles } from '../../src/capture/db-file-cache.js';
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

test('releaseDbFiles closes the main file and -shm descriptors, retired ones included', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
  try {
    const file = path.join(dir, 'a.db');
    fs.writeFileSync(file, Buffer.alloc(4096, 1));
    fs.writeFileSync(`${file}-shm`, Buffer.alloc(4096, 0));
    const first = dbFileFd(file);
    fs.renameSync(path.join(dir, 'a.db'), path.join(dir, 'old.db'));
    fs.writeFileSync(file, Buffer.alloc(4096, 2));
    const second = dbFileFd(file);
    const shm = dbFileFd(`${file}-shm`);
    releaseDbFiles(file);
    for (const fd of [first, second, shm]) assert.throws(() => fs.fstatSync(fd), { code: 'EBADF' });
    assert.notEqual(dbFileFd(file), -1, 'a released file opens again on its next use');
    releaseDbFiles(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
