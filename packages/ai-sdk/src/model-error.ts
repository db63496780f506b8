import { isOffshootError, OffshootError } from '@offshoot/client';

/**
 * The AI SDK tells the model only a failed tool's `message`, so the code and the hint (what to do instead: ask the
 * human, work on a fork) go into it. The error stays the client's OffshootError with the same code, hint,
 * retryable and humanCanAllow, the original as its cause; anything else is rethrown as is. Nothing is retried.
 */
export function forTheModel(err: unknown): unknown {
  if (!isOffshootError(err)) return err;
  const hint = err.hint === undefined ? '' : `; ${err.hint}`;
  return new OffshootError(err.code, `${err.message} (${err.code}${hint})`, {
    ...(err.hint === undefined ? {} : { hint: err.hint }),
    retryable: err.retryable,
    humanCanAllow: err.humanCanAllow === true,
    cause: err,
  });
}

/** Runs one verb, handing its failure to the model with the code and hint kept. */
export async function asTool<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw forTheModel(err);
  }
}
