/**
 * The capture loop's next pause: back to `min` when the last poll found a transaction, else double, up to `max`.
 * A session whose writer has gone quiet then polls a few times a second instead of a hundred.
 */
export function nextPollInterval(current: number, found: boolean, min: number, max: number): number {
  return found ? min : Math.min(Math.max(current * 2, min), max);
}
