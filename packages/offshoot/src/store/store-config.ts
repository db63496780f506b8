import { durationMs, formatDuration, parseDuration } from '../core/duration.js';
import { fail, hasCode } from '../core/errors.js';
import { CONFIG_KEY } from '../core/keys.js';
import { nameMap } from '../core/name-map.js';
import type { Backend } from './backend.js';

/** One database's own settings; what it leaves out is the store's. */
export interface DatabaseConfig {
  /** How long every durable txid of its branches stays addressable (`@tx:`, `@at:`), as a Go duration. */
  history_window?: string;
}

/**
 * The store's settings at config.json (ours, additive: an earlier implementation never reads it), changed only by
 * compare-and-swap. Fields this build does not know are kept as they are.
 */
export interface StoreConfig extends DatabaseConfig {
  databases?: Record<string, DatabaseConfig>;
  [extra: string]: unknown;
}

/** The history window of a store that names none: a day. */
export const DEFAULT_HISTORY_WINDOW = '24h0m0s';

/** Reads config.json; an absent one reads as empty with no etag. */
export async function readStoreConfig(backend: Backend): Promise<{ config: StoreConfig; etag: string | undefined }> {
  let got;
  try {
    got = await backend.get(CONFIG_KEY);
  } catch (err) {
    if (hasCode(err, 'NOT_FOUND')) return { config: {}, etag: undefined };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(got.body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw fail('CORRUPT', `${CONFIG_KEY} is not a JSON object`, {
      hint: `restore ${CONFIG_KEY} from a backup, or remove it (the settings go back to their defaults)`,
    });
  const config = parsed as StoreConfig;
  if (config.databases !== undefined) config.databases = nameMap(config.databases);
  return { config, etag: got.etag };
}

/** Writes config.json by compare-and-swap against the etag read (create-only when there was none). */
export async function writeStoreConfig(backend: Backend, config: StoreConfig, etag: string | undefined): Promise<void> {
  const body = Buffer.from(`${JSON.stringify(config, null, 2)}\n`);
  await backend.put(CONFIG_KEY, body, etag === undefined ? { ifNoneMatch: true } : { ifMatch: etag });
}

/** Checks a history window as given (a positive Go duration) and returns it in canonical form. */
export function checkHistoryWindow(text: string): string {
  const d = parseDuration(text);
  if (d <= 0n)
    throw fail('INVALID_ARGUMENT', `the history window must be positive, not ${JSON.stringify(text)}`, {
      hint: 'use a duration such as 24h or 168h',
    });
  return formatDuration(d);
}

/** The history window in force for db, in ms: its own, else the store's, else a day. */
export function historyWindowMs(config: StoreConfig, db: string): number {
  const own = config.databases !== undefined && Object.hasOwn(config.databases, db) ? config.databases[db] : undefined;
  const text = own?.history_window ?? config.history_window ?? DEFAULT_HISTORY_WINDOW;
  try {
    return durationMs(parseDuration(text));
  } catch {
    // A setting no longer readable keeps more, never less: the default window.
    return durationMs(parseDuration(DEFAULT_HISTORY_WINDOW));
  }
}
