import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { parseDataKey } from '../src/core/keys.js';
import { create } from '../src/ops/create.js';
import { fork } from '../src/ops/fork.js';
import { makeContext } from '../src/ops/helpers/context/context.js';
import { Session } from '../src/session/session.js';
import type { Backend, Body } from '../src/store/backend.js';
import { ChainResolver } from '../src/store/chain-resolver.js';
import { openBackend } from '../src/store/open-backend.js';
import { Store } from '../src/store/store.js';
import { parseStoreSpec } from '../src/store/store-spec.js';
import { bytes, printTable } from './measure.js';

const MiB = 1 << 20;
const PAGE = 4096;

function buildDatabase(path: string, size: number): number {
  const db = openDatabase(path);
  db.exec('CREATE TABLE items(id INTEGER PRIMARY KEY, k TEXT, body BLOB)');
  const ins = db.prepare('INSERT INTO items(k, body) VALUES (?, randomblob(3000))');
  const rows = Math.ceil(size / 3200);
  db.exec('BEGIN');
  for (let i = 0; i < rows; i++) ins.run(`key-${i}`);
  db.exec('COMMIT');
  db.close();
  return rows;
}

/** Wraps a backend, adding up the bytes and objects put under data/. */
function tally(inner: Backend): {
  backend: Backend;
  written: { bytes: number; objects: number; largestMerge: number };
} {
  const written = { bytes: 0, objects: 0, largestMerge: 0 };
  const backend = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'put') {
        return (key: string, body: Body, cond?: unknown) => {
          const d = parseDataKey(key);
          if (d !== undefined) {
            const size = body instanceof Uint8Array ? body.byteLength : statSync(body.file).size;
            written.objects++;
            written.bytes += size;
            if (d.kind === 'segment' && d.minTxid < d.maxTxid)
              written.largestMerge = Math.max(written.largestMerge, size);
          }
          return (target.put as (...a: unknown[]) => Promise<string>).call(target, key, body, cond);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { backend, written };
}

/**
 * `flushes` single-row session flushes on a fork of a `size`-byte database in a store at `layout` (3: merged segments;
 * 2: snapshots at the head, as the earlier implementation bounded chains): bytes written, members, goal.
 */
async function benchDiverging(size: number, flushes: number, goal: number, layout: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-compact-'));
  try {
    const spec = parseStoreSpec(join(dir, 'store'));
    await (await Store.init(spec, { layout })).close();
    const { backend, written } = tally(await openBackend(spec));
    const store = await Store.open(spec, { backend });
    const ctx = makeContext(store, dir, { warn: () => undefined });
    const src = join(dir, 'src.db');
    const rows = buildDatabase(src, size);
    await create(ctx, 'db', { from: src });
    await fork(ctx, { db: 'db', branch: 'main' }, 'agent');
    const session = await Session.open(ctx, { db: 'db', branch: 'agent' }, {});
    const startBytes = written.bytes;
    const startObjects = written.objects;
    let heads = 0;
    // The flush that wrote the most for what it changed: its bytes (head plus any inline merge) and pages.
    let worst = { bytes: 0, pages: 1 };
    let inline = 0;
    try {
      const db = openDatabase(session.path);
      const upd = db.prepare('UPDATE items SET body = randomblob(3000) WHERE id = ?');
      for (let i = 0; i < flushes; i++) {
        upd.run(1 + ((i * 2654435761) % rows));
        const out = await session.flush({ kind: 'manual' });
        heads += out.bytes ?? 0;
        const own = (out.bytes ?? 0) + (out.mergedBytes ?? 0);
        if (out.mergedBytes !== undefined) inline++;
        if (own / (out.pages ?? 1) > worst.bytes / worst.pages) worst = { bytes: own, pages: out.pages ?? 1 };
      }
      db.close();
    } finally {
      await session.close();
    }
    const total = written.bytes - startBytes;
    const { ref } = await store.getRef('db', 'agent');
    const members = (await new ChainResolver(store).resolve(ref.lineage, ref.head_txid)).members.length;
    await store.close();
    return [
      bytes(statSync(src).size),
      String(layout),
      `${flushes} one-row flushes`,
      `${bytes(total)} in ${written.objects - startObjects} objects`,
      `${bytes(heads)} of head segments; largest flush ${bytes(worst.bytes)} for ${worst.pages} changed page(s) = ${(worst.bytes / (worst.pages * PAGE)).toFixed(2)}× (${inline} merged inline); largest merge ${bytes(written.largestMerge)} (in the background); ${members} members at head`,
      `≤ ${bytes(goal)}: ${total <= goal ? 'met' : 'NOT met'}`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Issue goal: 100 flushes on 400 MB ≤ 16 MiB, 1,000 on 1 GiB ≤ 64 MiB, at layout 3
 * (OFFSHOOT_BENCH_DIVERGE="MiB:flushes:goalMiB[:layout],…"; a layout-2 case shows what `offshoot upgrade` buys).
 */
export async function compactionBench(): Promise<void> {
  const cases = (process.env.OFFSHOOT_BENCH_DIVERGE ?? '400:100:16,1024:1000:64').split(',').map((c) => {
    const [size, flushes, goal, layout] = c.split(':').map(Number);
    return { size: (size ?? 0) * MiB, flushes: flushes ?? 0, goal: (goal ?? 0) * MiB, layout: layout ?? 3 };
  });
  const rows: string[][] = [];
  for (const c of cases) rows.push(await benchDiverging(c.size, c.flushes, c.goal, c.layout));
  printTable(
    'a diverging branch (session flushes, local store)',
    ['size', 'layout', 'work', 'written to the store', 'detail', 'goal'],
    rows,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await compactionBench();
