import type { ForkedSession } from '@offshoot/client/testkit';

/** Two rows; each test adds one of its own to its fork and must see exactly three. */
export const SEED_SQL: string;
/** The seed's name: its database is eval-runner. */
export const SEED_NAME: string;
/** Runs SQL on a checkout with the stock sqlite3 shell. */
export function sql(path: string, text: string): string;
/** Writes into the fork, returns the labels it sees, and records which worker ran it. */
export function exercise(fork: ForkedSession, title: string, worker: string): string;
