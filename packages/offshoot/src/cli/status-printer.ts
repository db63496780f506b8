import type { BranchStatus, StatusTail } from '../ops/status.js';
import { statusLine, statusTailLines, toJsonDocument, toJsonLine } from './output.js';

/** How `status` prints: text lines, the one --json document, or JSON Lines (--json --stream). */
export type StatusForm = 'text' | 'json' | 'jsonl';

/** Prints a status as its branches are read, so no form holds the whole listing. */
export interface StatusPrinter {
  branch(b: BranchStatus): Promise<void>;
  end(tail: StatusTail): Promise<void>;
}

const ITEM_INDENT = '\n    ';

/**
 * A printer of one form. The --json document is written piece by piece yet byte for byte as the one-document printer
 * writes it (two-space indent, a branch per array item); JSON Lines is a branch per line, then one line holding the
 * rest of that document (`unreadable`, `ro_cache`, and under a limit `truncated` and `more`).
 */
export function statusPrinter(form: StatusForm, print: (text: string) => Promise<void>): StatusPrinter {
  let count = 0;
  if (form === 'text')
    return {
      branch: (b) => print(`${statusLine(b)}\n`),
      end: (tail) => print(`${statusTailLines(tail).join('\n')}\n`),
    };
  if (form === 'jsonl')
    return {
      branch: (b) => print(`${toJsonLine(b)}\n`),
      end: (tail) => print(`${toJsonLine(tail)}\n`),
    };
  return {
    branch: (b) =>
      print(
        `${count++ === 0 ? '{\n  "branches": [' : ','}${ITEM_INDENT}${toJsonDocument(b).replace(/\n/g, ITEM_INDENT)}`,
      ),
    // The rest of the document is its own document without the opening brace.
    end: (tail) => print(`${count === 0 ? '{\n  "branches": []' : '\n  ]'},${toJsonDocument(tail).slice(1)}\n`),
  };
}
