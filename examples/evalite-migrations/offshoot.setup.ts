// offshoot.setup.ts: seeds the database once per run (a daemon of its own unless OFFSHOOT_SOCKET names one);
// every data item forks it.
import { offshootSetup } from '@offshoot/evalite';

export default offshootSetup({
  name: 'orders',
  seed: `CREATE TABLE orders(id INTEGER PRIMARY KEY, customer TEXT NOT NULL, total REAL NOT NULL);
INSERT INTO orders VALUES (1, 'ada', 12.5), (2, 'grace', 40), (3, 'linus', 99.9);`,
});
