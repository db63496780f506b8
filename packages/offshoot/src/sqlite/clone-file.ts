import { constants } from 'node:fs';
import { copyFile } from 'node:fs/promises';

/** How a file was copied: a reflink clone sharing blocks, or a kernel-side copy of the bytes. */
export type CloneMethod = 'reflink' | 'copy';

const NO_CLONE = new Set(['ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EINVAL', 'ENOSYS', 'ENOTTY']);

/**
 * Copies src to dst as a reflink clone where the filesystem can (FICLONE_FORCE, detected by trying it), else as a
 * plain copy; dst is overwritten.
 */
export async function cloneOrCopy(src: string, dst: string): Promise<CloneMethod> {
  try {
    await copyFile(src, dst, constants.COPYFILE_FICLONE_FORCE);
    return 'reflink';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (!NO_CLONE.has(code)) throw err;
  }
  await copyFile(src, dst);
  return 'copy';
}
