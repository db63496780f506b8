import { existsSync, readSync } from 'node:fs';
import { closeRawFile, openRawFile } from '../sqlite/raw-file.js';
import { OffshootError } from '../core/errors.js';

/** How a checkout broke the connection contract: it left WAL mode, or a rollback journal sits beside it. */
export type BreachKind = 'journal_mode' | 'rollback_journal';

/** What was found, for the error, the event and the metric. */
export interface ContractBreach {
  kind: BreachKind;
  /** One clause saying what was found, e.g. "its header says rollback-journal mode (format versions 1/1)". */
  found: string;
}

/**
 * The typed error of a broken connection contract: code UNSUPPORTED, a hint naming the fix, and the breach itself
 * so the session can tell it from any other failure of its capture.
 */
export class ContractBreachError extends OffshootError {
  constructor(
    readonly breach: ContractBreach,
    dbPath: string,
  ) {
    super('UNSUPPORTED', `${dbPath} left WAL mode while under live capture: ${breach.found}`, {
      hint:
        'another connection set journal_mode on the checkout: make every connection leave journal_mode alone (the ' +
        'checkout is WAL), then close the session and open it again (what capture missed is kept as an undo branch)',
    });
    this.name = 'ContractBreachError';
  }
}

// Bytes 18 and 19 of the database header: the file format's write and read versions, 2 in WAL mode.
const VERSIONS_OFFSET = 18;

function fromVersions(buf: Buffer, bytesRead: number): ContractBreach | undefined {
  // A file shorter than its header is no database yet; nothing to judge.
  if (bytesRead < 2) return undefined;
  const write = buf[0];
  const read = buf[1];
  if (write === 2 && read === 2) return undefined;
  return { kind: 'journal_mode', found: `its header says rollback-journal mode (format versions ${write}/${read})` };
}

function journalBeside(dbPath: string): ContractBreach | undefined {
  if (!existsSync(`${dbPath}-journal`)) return undefined;
  return { kind: 'rollback_journal', found: `a rollback journal ${dbPath}-journal exists beside it` };
}

/**
 * Checks a checkout against the connection contract through fd, a descriptor on its main file: two header bytes
 * and one stat, so cheap enough to run whenever capture has a reason to look.
 */
export function breachAt(dbPath: string, fd: number): ContractBreach | undefined {
  const buf = Buffer.alloc(2);
  const bytesRead = readSync(fd, buf, 0, 2, VERSIONS_OFFSET);
  return fromVersions(buf, bytesRead) ?? journalBeside(dbPath);
}

/** The same check with a descriptor of its own, closed again (an evicted session's checkout). */
export function breachOfClosed(dbPath: string): ContractBreach | undefined {
  let fd: number;
  try {
    fd = openRawFile(dbPath);
  } catch {
    return journalBeside(dbPath);
  }
  try {
    return breachAt(dbPath, fd);
  } finally {
    closeRawFile(fd);
  }
}
