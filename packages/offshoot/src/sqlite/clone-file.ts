import { constants } from 'node:fs';
import { copyFile } from 'node:fs/promises';

/** How a file was copied: a reflink clone sharing blocks, or a kernel-side copy of the bytes. */
export type CloneMethod = 'reflink' | 'copy';

const NO_CLONE = new Set(['ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EINVAL', 'ENOSYS', 'ENOTTY']);

/**
 * Copies src to dst as a reflink clone where the filesystem can (FICLONE_FORCE, detected by trying it), else as a
 * plain copy; dst is overwritten, unless `fresh` says it is a new private name (a temp file), which must not exist.
 */
export async function cloneOrCopy(src: string, dst: string, fresh = false): Promise<CloneMethod> {
  try {
    await copyFile(src, dst, constants.COPYFILE_FICLONE_FORCE);
    return 'reflink';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!NO_CLONE.has(code)) throw err;
  }
  // A new file is not truncated first: on ext4 a file truncated to zero is written back as it is closed
  // (auto_da_alloc), and every journal commit after that waits for the copy's blocks.
  await copyFile(src, dst, fresh ? constants.COPYFILE_EXCL : 0);
  return 'copy';
}
