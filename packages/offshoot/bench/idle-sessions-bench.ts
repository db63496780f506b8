import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { LineClient, makeStoreDir, startDaemon, type DaemonProcess } from '../test/daemon/daemon-process.js';
import { bytes, printTable } from './measure.js';

/** Sessions the daemon holds; past -max-open they are evicted. */
const SESSIONS = Number(process.env.OFFSHOOT_BENCH_IDLE_SESSIONS ?? 1000);
/** Sessions whose checkouts stay open (-max-open). */
const MAX_OPEN = Number(process.env.OFFSHOOT_BENCH_IDLE_MAX_OPEN ?? 16);
/** Seconds of idleness measured per phase. */
const WINDOW_S = Number(process.env.OFFSHOOT_BENCH_IDLE_WINDOW_S ?? 30);
/** Connected sessions rest after 10 s without a commit: the window starts after that. */
const SETTLE_S = 12;
const CLIENT_LANES = 4;

/** CPU seconds (user + system) the process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** The daemon's CPU share (percent of one core) over a window of idleness. */
async function idleCpu(pid: number): Promise<number> {
  await sleep(SETTLE_S * 1000);
  const c0 = cpuSeconds(pid);
  await sleep(WINDOW_S * 1000);
  return ((cpuSeconds(pid) - c0) / WINDOW_S) * 100;
}

async function openSessions(d: DaemonProcess, from: number, to: number): Promise<void> {
  await Promise.all(
    Array.from({ length: CLIENT_LANES }, async (_, lane) => {
      const c = await LineClient.connect(d.sock);
      try {
        for (let i = from + lane; i < to; i += CLIENT_LANES) {
          for (const req of [
            { op: 'fork', db: 'app', branch: 'main', name: `s${i}` },
            { op: 'open', db: 'app', branch: `s${i}` },
          ]) {
            const res = await c.request(req);
            if (!res.ok) throw new Error(`${JSON.stringify(req)}: ${res.error}`);
          }
        }
      } finally {
        c.close();
      }
    }),
  );
}

/** One daemon's idle cost: none, -max-open connected sessions, then SESSIONS with the rest evicted. */
async function phases(leaseMs: number | undefined): Promise<string[][]> {
  const s = makeStoreDir();
  const env = leaseMs === undefined ? {} : { OFFSHOOT_LEASE_TTL_MS: String(leaseMs) };
  const d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0', '-max-open', String(MAX_OPEN)], env);
  const pid = d.proc.pid ?? 0;
  const leases = leaseMs === undefined ? 'default timing' : 'no renewal in the window';
  try {
    if (s.cli(['create', 'app']).code !== 0) throw new Error('create failed');
    const rows: string[][] = [];
    const rss0 = rssBytes(pid);
    rows.push(['no session', leases, `${(await idleCpu(pid)).toFixed(2)}%`, bytes(rss0), '']);
    await openSessions(d, 0, MAX_OPEN);
    const cpuOpen = await idleCpu(pid);
    const rssOpen = rssBytes(pid);
    rows.push([
      `${MAX_OPEN} connected`,
      leases,
      `${cpuOpen.toFixed(2)}%`,
      bytes(rssOpen),
      `${bytes((rssOpen - rss0) / MAX_OPEN)} a session`,
    ]);
    await openSessions(d, MAX_OPEN, SESSIONS);
    const cpuAll = await idleCpu(pid);
    const rssAll = rssBytes(pid);
    rows.push([
      `${MAX_OPEN} connected + ${SESSIONS - MAX_OPEN} evicted`,
      leases,
      `${cpuAll.toFixed(2)}%`,
      bytes(rssAll),
      `${bytes((rssAll - rssOpen) / (SESSIONS - MAX_OPEN))} an evicted session`,
    ]);
    return rows;
  } finally {
    await d.stop();
    s.cleanup();
  }
}

/**
 * What idle sessions cost a daemon: its CPU share over a quiet window (from /proc, user + system) and its resident
 * memory, with no session, with -max-open connected ones, and with a thousand of which all but those are evicted;
 * once with leases that need no renewal in the window (the capture's own cost) and once with the default timing
 * (the daemon's liveness object rewritten every 10 s; each session's own 15-minute lease renewed every 5 minutes, so
 * not within a window that starts right after the sessions opened).
 */
export async function idleSessionsBench(): Promise<void> {
  const rows = [...(await phases(3_600_000)), ...(await phases(undefined))];
  printTable(
    `idle sessions (${WINDOW_S} s windows, daemon process CPU, % of one core)`,
    ['sessions', 'leases', 'CPU', 'RSS', 'per session'],
    rows,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await idleSessionsBench();
