import { fail, hasCode } from '../core/errors.js';
import { formatDuration, msDuration } from '../core/duration.js';
import { validateName } from '../core/names.js';
import {
  checkHistoryWindow,
  DEFAULT_HISTORY_WINDOW,
  historyWindowMs,
  readStoreConfig,
  type StoreConfig,
  writeStoreConfig,
} from '../store/store-config.js';
import type { OpsContext } from './helpers/context/context.js';

/** The settings `offshoot config` knows. */
export const CONFIG_KEYS = ['history_window'] as const;

/** One setting `offshoot config` knows. */
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/** What is in force for the store, or for one database: each setting's value and where it comes from. */
export interface ConfigReport {
  db: string | undefined;
  history_window: string;
  /** `database`: the database's own; `store`: the store's; `default`: neither says. */
  source: 'database' | 'store' | 'default';
  /** Every database with settings of its own (the store's report only). */
  databases?: Record<string, { history_window?: string }>;
}

const CAS_RETRIES = 8;

/**
 * `offshoot config [db] [key=value]…`: shows the settings in force for the store, or for one database, and sets
 * them: `history_window` (how long every durable txid stays addressable as a moment, `@tx:`/`@at:`; a day unless
 * said otherwise) store-wide or per database; `default` drops a setting. Kept in config.json (ours, additive) by
 * compare-and-swap.
 */
export async function config(
  ctx: OpsContext,
  db: string | undefined,
  settings: Partial<Record<ConfigKey, string>> = {},
): Promise<ConfigReport> {
  if (db !== undefined) validateName('database', db);
  const keys = Object.keys(settings) as ConfigKey[];
  for (const k of keys)
    if (!CONFIG_KEYS.includes(k))
      throw fail('INVALID_ARGUMENT', `config: no setting ${JSON.stringify(k)}`, {
        hint: `the settings are: ${CONFIG_KEYS.join(', ')}`,
      });
  const window = settings.history_window;
  const value = window === undefined || window === 'default' ? window : checkHistoryWindow(window);
  if (value === undefined) return report((await readStoreConfig(ctx.store.backend)).config, db);
  for (let i = 0; ; i++) {
    const { config: cur, etag } = await readStoreConfig(ctx.store.backend);
    const next = applyWindow(cur, db, value);
    try {
      await writeStoreConfig(ctx.store.backend, next, etag);
      return report(next, db);
    } catch (err) {
      if (!(hasCode(err, 'CAS_CONFLICT') || hasCode(err, 'ALREADY_EXISTS')) || i >= CAS_RETRIES) throw err;
    }
  }
}

// A copy of cur with the window set (or, for `default`, dropped) for db, or store-wide.
function applyWindow(cur: StoreConfig, db: string | undefined, value: string): StoreConfig {
  const next: StoreConfig = { ...cur, databases: { ...(cur.databases ?? {}) } };
  const dbs = next.databases as Record<string, { history_window?: string }>;
  if (db === undefined) {
    if (value === 'default') delete next.history_window;
    else next.history_window = value;
  } else {
    const own = { ...(Object.hasOwn(dbs, db) ? dbs[db] : {}) };
    if (value === 'default') delete own.history_window;
    else own.history_window = value;
    if (Object.keys(own).length === 0) delete dbs[db];
    else dbs[db] = own;
  }
  if (Object.keys(dbs).length === 0) delete next.databases;
  return next;
}

function report(c: StoreConfig, db: string | undefined): ConfigReport {
  const own =
    db !== undefined && c.databases !== undefined && Object.hasOwn(c.databases, db) ? c.databases[db] : undefined;
  const source = own?.history_window !== undefined ? 'database' : c.history_window !== undefined ? 'store' : 'default';
  const window =
    source === 'default' ? DEFAULT_HISTORY_WINDOW : formatDuration(msDuration(historyWindowMs(c, db ?? '')));
  return {
    db,
    history_window: window,
    source,
    ...(db === undefined ? { databases: { ...(c.databases ?? {}) } } : {}),
  };
}
