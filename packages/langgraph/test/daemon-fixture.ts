import { fileURLToPath } from 'node:url';

/** The repository's `offshoot` wrapper: the CLI and daemon the tests run. */
export const OFFSHOOT_BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = OFFSHOOT_BIN;
