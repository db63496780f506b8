import { parseMetaPairs } from '../../core/meta.js';
import { validateName } from '../../core/names.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { sessionFlushOutcome } from '../output.js';

/** `offshoot session flush <db>[@b] [name] [--meta k=v]...`: makes an open session's writes durable now. */
export const sessionFlushCommand: Command = {
  name: 'session flush',
  summary: 'flush an open session now, optionally as a named checkpoint',
  usage: '<db>[@branch] [name] [--meta K=V]... [-socket PATH]',
  help: [
    'Makes everything committed to the session\'s checkout durable in the store and prints "durable through txid N".',
    'With a name, records that txid as a checkpoint (--meta tags it; meta needs a name). Fails if the session is not',
    'open, was fenced (another holder took the lease), or the checkpoint name exists.',
  ].join('\n'),
  examples: ['offshoot session flush app@attempt-1', 'offshoot session flush app@attempt-1 tests-pass --meta run=42'],
  flags: {
    meta: { type: 'string', multiple: true, value: 'K=V', description: 'tag the checkpoint' },
    socket: SOCKET_FLAG,
  },
  args: { min: 1, max: 2 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const name = inv.args[1] === undefined ? undefined : validateName('checkpoint', inv.args[1]);
    const meta = parseMetaPairs(inv.flags.list('meta'));
    const { withDaemon } = await import('../daemon-request.js');
    const txid = await withDaemon(inv, (c) => c.flush(t.db, t.branch, name, meta ? { meta } : {}));
    return sessionFlushOutcome(t, name, txid);
  },
};
