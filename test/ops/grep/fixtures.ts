import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sortUtf8 } from "../../../src/core/byte-order";
import { trustedRepoPath } from "../../../src/core/repo-path";
import { grep, type GrepCandidate, type GrepOptions, type GrepResult } from "../../../src/ops/grep";

export type Content = string | Uint8Array;

export interface MemOptions {
  /** serve each file as a ReadableStream of chunks this large */
  streamChunk?: number;
  /** resolve open() after a pseudo-random delay, so reads finish out of order */
  jitter?: boolean;
  /** called with each path opened */
  onOpen?: (path: string) => void;
}

export function bytesOf(c: Content): Uint8Array {
  return typeof c === "string" ? new TextEncoder().encode(c) : c;
}

/** In-memory candidates in UTF-8 byte order, the way the walk delivers them. */
export function memCandidates(files: Record<string, Content>, o: MemOptions = {}): GrepCandidate[] {
  return sortUtf8(Object.keys(files)).map((p, k) => {
    const bytes = bytesOf(files[p]!);
    return {
      path: trustedRepoPath(p),
      size: bytes.length,
      async open() {
        o.onOpen?.(p);
        if (o.jitter) await Bun.sleep((k * 7919) % 5);
        return o.streamChunk ? chunkedStream(bytes, o.streamChunk) : bytes;
      },
    };
  });
}

export function chunkedStream(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

export const ALL = { maxMatches: 100_000, maxBytes: 64 * 1024 * 1024 } as const;

export function grepAll(files: Record<string, Content>, opts: Omit<GrepOptions, "queryKey"> & { queryKey?: string }, mem: MemOptions = {}): Promise<GrepResult> {
  return grep(memCandidates(files, mem), { queryKey: "test", ...ALL, ...opts });
}

/** (path, line, col) of every match, as comparable strings. */
export function positions(r: GrepResult): string[] {
  return r.matches.map((m) => `${m.path}:${m.line}:${m.col}`);
}

/**
 * Reference semantics, independent of the engine: each line (split at `\n`,
 * no line after a final `\n`, no leading byte order mark) searched alone with `gsu` — `s` so `.` takes
 * `\r` like ripgrep, and no `m` so `^`/`$` are the line's ends. Columns in bytes.
 */
export function referenceMatches(path: string, text: string, re: RegExp): string[] {
  const out: string[] = [];
  if (text.startsWith("\ufeff")) text = text.slice(1); // a byte order mark is not content, as in ripgrep
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  lines.forEach((line, k) => {
    re.lastIndex = 0;
    for (;;) {
      const m = re.exec(line);
      if (!m) break;
      out.push(`${path}:${k + 1}:${Buffer.byteLength(line.slice(0, m.index)) + 1}`);
      if (m[0].length === 0) {
        if (m.index >= line.length) break;
        const unit = line.charCodeAt(m.index);
        re.lastIndex = m.index + (unit >= 0xd800 && unit <= 0xdbff ? 2 : 1);
      }
    }
  });
  return out;
}

export function tempDir(prefix: string): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), `worksnap-${prefix}-`));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

/** "whole" for an answer that holds everything, else why it was cut (a time budget that ran out names the file). */
export function cutOf(r: Pick<GrepResult, "truncated" | "note" | "timed_out">): string {
  return r.truncated ? `truncated: ${r.note ?? ""}${r.timed_out ? " (timed out)" : ""}` : "whole";
}
