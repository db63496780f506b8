// Two `offshoot upgrade`s of one store at once, on any backend: the first reads the manifest and is held until the
// second has raised the layout, so its compare-and-swap names a stale version, fails, and its re-read finds the
// store already raised; a downgrade is then refused. Shared by the local and the S3 suites.
import assert from 'node:assert/strict';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { upgrade } from '../../src/ops/upgrade.js';
import type { Backend } from '../../src/store/backend.js';
import type { StoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';
import { rejectsCode } from '../ops/harness.js';

/**
 * A backend that, once armed, answers its next read of the manifest only when `release` resolves (`held` tells when
 * that read is waiting), and counts the manifest writes it passes on.
 */
function manifestReadHolder(inner: Backend, release: Promise<void>) {
  let puts = 0;
  let armed = false;
  let onHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  const backend = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'get')
        return async (key: string, ...rest: unknown[]) => {
          const got = await (target.get as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
          if (key === 'offshoot.json' && armed) {
            armed = false;
            onHeld();
            await release;
          }
          return got;
        };
      if (prop === 'put')
        return (key: string, ...rest: unknown[]) => {
          if (key === 'offshoot.json') puts++;
          return (target.put as (...a: unknown[]) => Promise<unknown>).call(target, key, ...rest);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return {
    backend,
    held,
    arm: () => {
      armed = true;
    },
    manifestPuts: () => puts,
  };
}

/** Races two upgrades of the store at spec (at layout 2) as above; `dir` is a scratch directory for their contexts. */
export async function assertUpgradeRace(spec: StoreSpec, open: () => Promise<Backend>, dir: string): Promise<void> {
  let raised: () => void = () => undefined;
  const second = new Promise<void>((resolve) => (raised = resolve));
  const slow = manifestReadHolder(await open(), second);
  const first = await Store.open(spec, { backend: slow.backend });
  const other = await Store.open(spec, { backend: await open() });
  try {
    slow.arm();
    const a = upgrade(makeContext(first, `${dir}-a`));
    await slow.held;
    const b = await upgrade(makeContext(other, `${dir}-b`));
    raised();
    assert.deepEqual([b.from, b.to, b.upgraded], [2, 3, true]);
    const r = await a;
    assert.deepEqual([r.from, r.to, r.upgraded], [3, 3, false], 'the stale compare-and-swap lost; the re-read found 3');
    assert.equal(slow.manifestPuts(), 1, 'the held upgrade tried its compare-and-swap once, and lost');
    await rejectsCode(upgrade(makeContext(other, `${dir}-c`), { to: 2 }), 'INVALID_ARGUMENT');
  } finally {
    await first.close();
    await other.close();
  }
}
