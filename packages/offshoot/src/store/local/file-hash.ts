import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { forEachChunk } from './file-chunks.js';
import { nodeCrypto } from '../../platform/node-crypto.js';

/** Hex SHA-256 of bytes: the local backend's etag. */
export function sha256Hex(bytes: Uint8Array): string {
  return nodeCrypto().createHash('sha256').update(bytes).digest('hex');
}

/** Hex SHA-256 of an open file's whole content, read in chunks (O(size) time, O(1) memory); leaves the handle open. */
export async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = nodeCrypto().createHash('sha256');
  await forEachChunk(handle, (chunk) => {
    hash.update(chunk);
  });
  return hash.digest('hex');
}

/** Hex SHA-256 of the file at path, streamed; rejects with the fs error (ENOENT…) when it cannot be opened. */
export async function hashFile(path: string): Promise<string> {
  const handle = await open(path, 'r');
  try {
    return await hashHandle(handle);
  } finally {
    await handle.close();
  }
}
