import type { BranchStatus } from '../ops/branch-view.js';
import type { StatusTail } from '../ops/status.js';
import { statusLine, statusTailLines, toJsonDocument, toJsonLine } from './output.js';

/** How `status` prints: text lines, the one --json document, or JSON Lines (--json --stream). */
export type StatusForm = 'text' | 'json' | 'jsonl';

/** Prints a status as its branches are read, so no form holds the whole listing. */
export interface StatusPrinter {
  /** Takes one branch; a promise when the caller must wait for stdout before reading on. */
  branch(b: BranchStatus): Promise<void> | undefined;
  end(tail: StatusTail): Promise<void>;
}

const ITEM_INDENT = '\n    ';

// Pieces wait to be written together until the event loop turns (the next read of refs) or this many characters are
// waiting: a write per branch is a system call per branch when stdout is a file.
const COALESCE_CHARS = 64 * 1024;

/** print, with the pieces of one turn of the event loop written as one; `flush` writes what waits. */
function coalesced(print: (text: string) => Promise<void>) {
  let pending = '';
  let scheduled = false;
  const flush = (): Promise<void> => {
    scheduled = false;
    const text = pending;
    pending = '';
    return text === '' ? Promise.resolve() : print(text);
  };
  // Undefined when the text only waits for the next flush: a branch then costs its caller no turn of the microtask queue.
  const write = (text: string): Promise<void> | undefined => {
    pending += text;
    if (pending.length >= COALESCE_CHARS) return flush();
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => void (scheduled ? flush() : undefined));
    }
    return undefined;
  };
  const end = async (text: string): Promise<void> => {
    await write(text);
    await flush();
  };
  return { write, end };
}

/**
 * A printer of one form. The --json document is written piece by piece yet byte for byte as the one-document printer
 * writes it (two-space indent, a branch per array item); JSON Lines is a branch per line, then one line holding the
 * rest of that document (`unreadable`, `ro_cache`, `layout`, and under a limit `truncated` and `more`).
 */
export function statusPrinter(form: StatusForm, print: (text: string) => Promise<void>): StatusPrinter {
  let count = 0;
  const out = coalesced(print);
  if (form === 'text')
    return {
      branch: (b) => out.write(`${statusLine(b)}\n`),
      end: (tail) => out.end(`${statusTailLines(tail).join('\n')}\n`),
    };
  if (form === 'jsonl')
    return {
      branch: (b) => out.write(`${toJsonLine(b)}\n`),
      end: (tail) => out.end(`${toJsonLine(tail)}\n`),
    };
  return {
    branch: (b) =>
      out.write(
        `${count++ === 0 ? '{\n  "branches": [' : ','}${ITEM_INDENT}${toJsonDocument(b).replace(/\n/g, ITEM_INDENT)}`,
      ),
    // The rest of the document is its own document without the opening brace.
    end: (tail) => out.end(`${count === 0 ? '{\n  "branches": []' : '\n  ]'},${toJsonDocument(tail).slice(1)}\n`),
  };
}
