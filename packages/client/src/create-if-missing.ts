import { isOffshootError } from './errors.js';

/** Runs `create`, a create of a database found missing; one created by someone else in between is as good. */
export async function createIfMissing(create: () => Promise<void>): Promise<void> {
  await create().catch((err: unknown) => {
    if (!isOffshootError(err, 'ALREADY_EXISTS')) throw err;
  });
}
