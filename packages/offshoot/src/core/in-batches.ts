/** Runs work over items, at most `limit` at a time, failing with the first error once every started one settled. */
export async function inBatches<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const i = next++;
      try {
        await work(items[i] as T, i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure !== undefined) throw failure.err;
}
