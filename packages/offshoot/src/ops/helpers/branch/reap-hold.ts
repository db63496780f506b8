/**
 * Why the reap of a branch whose TTL ran out waits: its checkout holds writes no checkpoint has (changed since it was
 * materialized or checkpointed, or uncheckpointed -wal content), its checkout cannot be proven clean (no readable
 * `.sum` sidecar), or a connection holds its checkout open (only the reaper sees that: it takes a lock).
 */
export type ReapHold = 'uncheckpointed_writes' | 'unverified_checkout' | 'open_connection';

/** The hold in words, after the branch's name: what every surface that reports a postponed reap says. */
export function reapHoldText(hold: ReapHold): string {
  switch (hold) {
    case 'uncheckpointed_writes':
      return 'its checkout holds writes no checkpoint has';
    case 'unverified_checkout':
      return 'its checkout cannot be proven clean (it has no readable .sum sidecar)';
    case 'open_connection':
      return 'a connection holds its checkout open';
  }
}
