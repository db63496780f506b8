import { resolve } from 'node:path';
import { durationMs, parseDuration } from '../../core/duration.js';
import { fail } from '../../core/errors.js';
import type { DaemonOptions } from '../../daemon/daemon-context.js';
import { parseByteSize } from '../byte-size.js';
import type { Command, Invocation } from '../command.js';
import { canonicalStore } from '../../store/store-spec.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { defaultMaxOpen, FDS_PER_SESSION, RESERVED_FDS } from '../../daemon/daemon-options.js';
import { openFileLimit } from '../../platform/open-file-limit.js';
import { packageVersion } from '../package-version.js';

function nonNegative(inv: Invocation, flag: string, fallback: string): ReturnType<typeof parseDuration> {
  const d = parseDuration(inv.flags.string(flag) ?? fallback);
  if (d < 0n)
    throw fail('INVALID_ARGUMENT', `-${flag} must not be negative`, {
      hint: `use 0 to disable, or a positive duration such as ${fallback}`,
    });
  return d;
}

function maxOpen(text: string | undefined): number {
  if (text === undefined) return defaultMaxOpen(openFileLimit());
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw fail('INVALID_ARGUMENT', `-max-open ${JSON.stringify(text)}: must be an integer of at least 1`, {
      hint: `use e.g. -max-open 100, or leave it out for a default from the file limit (${FDS_PER_SESSION} descriptors a session)`,
    });
  }
  return n;
}

function snapshotEvery(text: string | undefined): number {
  if (text === undefined) return 16;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < 1) {
    throw fail('INVALID_ARGUMENT', `-snapshot-every ${JSON.stringify(text)}: must be an integer of at least 1`, {
      hint: 'use e.g. -snapshot-every 16',
    });
  }
  return n;
}

// A short liveness object lets tests watch takeover and fencing without waiting 30 s; it is rewritten every third of it.
function leaseTiming(env: NodeJS.ProcessEnv): { leaseTtlMs?: number; renewEveryMs?: number } {
  const text = env.OFFSHOOT_LEASE_TTL_MS;
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 30)
    throw fail('INVALID_ARGUMENT', `OFFSHOOT_LEASE_TTL_MS=${text}: must be an integer of at least 30`, {
      hint: 'unset it for the default 30s lease',
    });
  return { leaseTtlMs: ms, renewEveryMs: Math.floor(ms / 3) };
}

// The dashboard is loaded only for -ui, so a plain daemon never imports it.
async function dashboard(token: string, store: string, version: string): Promise<DaemonOptions['httpFallback']> {
  const { daemonUi } = await import('../../ui/daemon-ui.js');
  return (d) => daemonUi(d, token, store, version);
}

/** `offshoot serve [flags]`: the daemon, until SIGINT, SIGTERM or the shutdown op. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the daemon: live sessions, background flushes and the janitor, over a unix socket',
  usage:
    '[-socket PATH] [-checkouts DIR] [-flush-every D] [-snapshot-every N] [-reap-every D] [-gc-grace D] [-ro-cache-budget BYTES] [-max-open N] [-http ADDR [-token T] [-http-allow-non-loopback] [-ui]]',
  help: [
    'Serves the store on a unix socket (mode 0600; a stale socket file is replaced, a live one refused) and prints',
    '"offshoot serving on <socket>". One daemon per checkout root: a second one on the same root refuses to start.',
    "Sessions opened here hold their branch lease, capture the checkout's WAL live, and flush every -flush-every",
    'when something is pending. The janitor reaps expired branches, clears stale destroy claims, collects garbage',
    'older than -gc-grace and keeps checkouts-ro/ within -ro-cache-budget. -http also serves /rpc, /metrics and',
    '/events behind a bearer token (-token, else $OFFSHOOT_TOKEN, else a generated one printed once on stderr);',
    'a non-loopback address needs -http-allow-non-loopback and an explicit token. -ui adds the read-only web',
    'dashboard to that listener, with live sessions, events and metrics (docs/ui.md).',
    'At most -max-open sessions keep descriptors open on their checkouts (default: what the file limit has room for,',
    `${FDS_PER_SESSION} a session after ${RESERVED_FDS} kept back); past it the least recently active idle session is evicted: it keeps its`,
    'lease and everything captured, and reconnects on its next write or request.',
    'SIGINT, SIGTERM or the shutdown op stop it gracefully: open sessions are flushed and closed (within 30s).',
    'Several daemons may serve one store (on one machine or many), each with its own socket and -checkouts root',
    '(docs/operations.md, Topology).',
    "Sessions' leases last 15m and stand on the daemon's liveness object (liveness/<id> in the store, rewritten",
    "every 10s): a killed daemon's branches are free once that object is 30s stale. $OFFSHOOT_LEASE_TTL_MS shortens",
    'those 30s (rewritten every third of it), for tests.',
  ].join('\n'),
  examples: [
    'offshoot serve',
    'offshoot -store s3://my-bucket/app serve -socket /run/offshoot/app.sock -http 127.0.0.1:7878',
  ],
  flags: {
    socket: SOCKET_FLAG,
    'flush-every': {
      type: 'string',
      value: 'DURATION',
      description: 'background flush interval (default 30s; 0 disables)',
    },
    'snapshot-every': {
      type: 'string',
      value: 'N',
      description:
        'the fork floor and chain bound: below layout 3 a snapshot at the head keeps chains within N members; at layout 3 merges keep them below it, at most 8 (default 16)',
    },
    'reap-every': {
      type: 'string',
      value: 'DURATION',
      description: 'janitor interval (default 1m; 0 disables reap, GC and ro-cache eviction)',
    },
    'gc-grace': {
      type: 'string',
      value: 'DURATION',
      description: 'how long unreachable objects wait before the janitor deletes them (default 15m)',
    },
    checkouts: {
      type: 'string',
      value: 'DIR',
      description: "this daemon's checkout root (default: the store's); every daemon sharing a store needs its own",
    },
    'max-open': {
      type: 'string',
      value: 'N',
      description: `sessions whose checkouts stay open at once; colder ones are evicted (default from the file limit)`,
    },
    'ro-cache-budget': {
      type: 'string',
      value: 'BYTES',
      description: 'cap on checkouts-ro/ (bytes or K/M/G/T, 1024-based; default 0 = unlimited)',
    },
    http: { type: 'string', value: 'ADDR', description: 'also serve HTTP on host:port (loopback unless acknowledged)' },
    token: {
      type: 'string',
      value: 'TOKEN',
      description: 'bearer token for -http (at least 16 characters; default $OFFSHOOT_TOKEN, else generated)',
    },
    'http-allow-non-loopback': {
      type: 'boolean',
      description: 'allow -http on a non-loopback address (needs an explicit token)',
    },
    ui: { type: 'boolean', description: 'also serve the web dashboard on the -http listener' },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const flushEvery = nonNegative(inv, 'flush-every', '30s');
    const reapEvery = nonNegative(inv, 'reap-every', '1m');
    const gcGrace = nonNegative(inv, 'gc-grace', '15m');
    const every = snapshotEvery(inv.flags.string('snapshot-every'));
    const budgetText = inv.flags.string('ro-cache-budget');
    const budget = budgetText === undefined ? 0 : parseByteSize(budgetText, '-ro-cache-budget');
    const lease = leaseTiming(process.env);
    const { validateHttpFlags, tokenFingerprint } = await import('../../daemon/http-server.js');
    const token = inv.flags.string('token');
    const http = validateHttpFlags({
      ...(inv.flags.string('http') !== undefined ? { http: inv.flags.string('http') } : {}),
      ...(token !== undefined ? { token } : {}),
      allowNonLoopback: inv.flags.boolean('http-allow-non-loopback'),
    });
    const ui = inv.flags.boolean('ui');
    if (ui && !http)
      throw fail('USAGE', '-ui requires -http', { hint: 'add -http 127.0.0.1:PORT, or run offshoot ui' });
    const { socketFor } = await import('../daemon-request.js');
    const socket = socketFor(inv);
    const ctx = await inv.context();
    const checkouts = inv.flags.string('checkouts');
    const { Daemon } = await import('../../daemon/daemon.js');
    const log = (line: string): void => void process.stderr.write(`${line}\n`);
    const daemon = await Daemon.start(
      ctx.store,
      checkouts === undefined || checkouts === '' ? ctx.checkoutRoot : resolve(checkouts),
      {
        store: canonicalStore(inv.storeSpec()),
        socket,
        flushEveryMs: durationMs(flushEvery),
        snapshotEvery: every,
        reapEveryMs: durationMs(reapEvery),
        gcGrace,
        roCacheBudget: budget,
        maxOpen: maxOpen(inv.flags.string('max-open')),
        ...(http ? { http: { addr: http.addr, token: http.token } } : {}),
        ...(ui && http ? { httpFallback: await dashboard(http.token, inv.storeSpec().text, packageVersion()) } : {}),
        ...lease,
        log,
      },
      packageVersion(),
    );
    let stopping = false;
    const signalled = (): void => {
      if (stopping) {
        log('offshoot: second signal: exiting without finishing the shutdown');
        process.exit(1);
      }
      stopping = true;
      void daemon.shutdown();
    };
    process.on('SIGINT', signalled);
    process.on('SIGTERM', signalled);
    const { socket: at, http: httpAt } = daemon.addresses;
    if (http && httpAt !== undefined) {
      if (http.tokenSource === 'generated')
        log(`offshoot: http: generated token ${http.token} (set OFFSHOOT_TOKEN or -token to choose one)`);
      log(`offshoot: http: listening on ${httpAt} (token fingerprint ${tokenFingerprint(http.token)})`);
      if (ui)
        log(
          `offshoot: ui: open http://${httpAt}/?token=${http.tokenSource === 'generated' ? http.token : '<your token>'}`,
        );
    }
    process.stdout.write(`offshoot serving on ${at}\n`);
    try {
      await daemon.done;
    } finally {
      process.off('SIGINT', signalled);
      process.off('SIGTERM', signalled);
    }
    // A shutdown that had to abandon a stuck flush may leave its handles behind; the process still ends.
    setTimeout(() => process.exit(), 5000).unref();
    return { data: { socket: at, http: httpAt, stopped: true }, text: '' };
  },
};
