// Places a branch's checkout the way a session's open does (its copy not synced, under a note, its -wal pinned),
// prints how it was placed, and then only waits: the test kills it before the copy is on the disk.
import { stageCheckout, placeCheckout } from '../../src/ops/helpers/checkout/install-checkout.js';
import { makeContext } from '../../src/ops/helpers/context/context.js';
import { parseStoreSpec } from '../../src/store/store-spec.js';
import { Store } from '../../src/store/store.js';

// The store's directory and the checkout root (a test store keeps them apart, the CLI's local store does not).
const [storeDir, root, db, branch] = process.argv.slice(2) as [string, string, string, string];
const store = await Store.open(parseStoreSpec(storeDir));
const ctx = makeContext(store, root, {});
const { ref } = await store.getRef(db, branch);
const staged = await stageCheckout(ctx, db, branch, ref, undefined, { deferSync: true });
await placeCheckout(staged);
process.stdout.write(`${staged.unsynced !== undefined ? 'pinned' : 'synced'}\n`);
setInterval(() => undefined, 1 << 30);
