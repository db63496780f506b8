import { fail } from '../../core/errors.js';
import type { Command } from '../command.js';

/** `offshoot config [db] [key=value]…`: shows or sets the store's settings, or one database's. */
export const configCommand: Command = {
  name: 'config',
  summary: "show or set the store's settings, or one database's (history_window)",
  usage: '[db] [history_window=DURATION|default]',
  help: [
    'history_window: how long every durable txid of a branch stays addressable as a moment (db@branch@tx:42,',
    'db@branch@at:2026-12-07T10:00:00Z) for export, checkout --read-only, fork --at, rollback --to, diff and query.',
    'GC keeps the chain of every state inside it; the cost is what was written inside the window. A day unless the',
    'store (offshoot init --history-window, or offshoot config history_window=…) or the database says otherwise;',
    '"default" drops a setting. With no setting, prints what is in force and where it comes from.',
  ].join('\n'),
  examples: [
    'offshoot config',
    'offshoot config app history_window=168h',
    'offshoot config app history_window=default',
  ],
  flags: {},
  args: { min: 0, max: 2 },
  async run(inv) {
    let db: string | undefined;
    const settings: Record<string, string> = {};
    for (const a of inv.args) {
      const eq = a.indexOf('=');
      if (eq < 0) {
        if (db !== undefined || Object.keys(settings).length > 0)
          throw fail('USAGE', `config: ${JSON.stringify(a)} is not a key=value setting`, {
            hint: 'write offshoot config [db] history_window=24h',
          });
        db = a;
      } else settings[a.slice(0, eq)] = a.slice(eq + 1);
    }
    const ctx = await inv.context();
    const { config } = await import('../../ops/config.js');
    const r = await config(ctx, db, settings);
    const lines = [`history_window=${r.history_window} (${r.source})`];
    for (const [name, c] of Object.entries(r.databases ?? {}))
      if (c.history_window !== undefined) lines.push(`${name}: history_window=${c.history_window}`);
    return { data: r, text: lines.map((l) => `${l}\n`).join('') };
  },
};
