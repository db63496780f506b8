import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { pathOutcome } from '../output.js';

/** `offshoot export <db[@b[@cp]]> <out> [--force]`: copies durable state out to a plain SQLite file. */
export const exportCommand: Command = {
  name: 'export',
  summary: 'copy a branch head or checkpoint out to a plain SQLite file',
  usage: '<db>[@branch[@checkpoint]] <out.db> [--force]',
  help: [
    'Writes the durable state (the head, the named checkpoint, or a moment: @tx:42, @at:<RFC 3339>) to <out.db>,',
    'atomically and verified; parent directories are created. The file has no sidecar, lease or link to the store.',
    'Refuses an existing file without --force. `export` then `create --from` moves a database between stores. A',
    "path inside the store or its checkout root (a ref, another branch's checkout) or a directory is refused,",
    'whatever the flags.',
  ].join('\n'),
  examples: ['offshoot export app ./app.db', 'offshoot export app@main@seeded ./seeded.db --force'],
  flags: { force: { type: 'boolean', description: 'overwrite an existing file' } },
  args: { min: 2, max: 2 },
  async run(inv) {
    const t = parseTarget(inv.arg(0), { allowCheckpoint: true });
    const ctx = await inv.context();
    const { exportTo } = await import('../../ops/export.js');
    return pathOutcome(await exportTo(ctx, t, inv.arg(1), { force: inv.flags.boolean('force') }));
  },
};
