import { fsync } from 'node:fs';
import { promisify } from 'node:util';
import { closeRawFile, openRawFile } from './raw-file.js';

const fsyncFd = promisify(fsync);

/**
 * Puts a database file on the disk through a descriptor of its own, whose close waits for the process's last
 * connection on the file (see raw-file), so a connection kept or open on it keeps its locks.
 */
export async function fsyncDatabase(path: string): Promise<void> {
  const fd = openRawFile(path);
  try {
    await fsyncFd(fd);
  } finally {
    closeRawFile(fd);
  }
}
