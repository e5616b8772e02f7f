import { canonicalJson } from "../core/canonical-json";
import { asWorksnapError } from "../core/errors";
import { UsageError } from "./args";

export const EXIT = { ok: 0, user: 1, usage: 2, internal: 70 } as const;

export const color = {
  enabled: (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR,
  wrap: (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s),
};

export function printJson(value: unknown): void {
  process.stdout.write(`${canonicalJson(value)}\n`);
}

/** The one place the CLI maps errors: a message on stderr (or JSON with --json) and an exit code. */
export function reportError(err: unknown, json: boolean): number {
  if (err instanceof UsageError) {
    process.stderr.write(`worksnap: ${err.message}\nRun with --help for usage.\n`);
    return EXIT.usage;
  }
  const e = asWorksnapError(err);
  if (json) process.stdout.write(`${canonicalJson({ error: { code: e.code, message: e.message, details: e.details } })}\n`);
  else process.stderr.write(`worksnap: ${e.code}: ${e.message}\n`);
  return e.code === "INTERNAL" ? EXIT.internal : EXIT.user;
}

/** A progress bar on stderr, only when stderr is a terminal and the work is long. */
export function progressBar(label: string): (done: number, total: number) => void {
  if (!process.stderr.isTTY) return () => undefined;
  const started = Date.now();
  let shown = false;
  let finished = false;
  return (done, total) => {
    // Long work only: many items, and still going after 300 ms.
    if (finished || total < 500 || (!shown && Date.now() - started < 300)) return;
    shown = true;
    const width = 30;
    const frac = total === 0 ? 1 : done / total;
    const bar = "#".repeat(Math.round(frac * width)).padEnd(width, ".");
    process.stderr.write(`\r${label} [${bar}] ${done}/${total}`);
    if (done >= total) {
      process.stderr.write("\n");
      finished = true;
    }
  };
}

/** Names on stderr what an answer skipped because it could not be read (its `unreadable` fields), if anything. */
export function warnUnreadable(r: { unreadable?: string[]; unreadable_total?: number }): void {
  const names = r.unreadable ?? [];
  const total = r.unreadable_total ?? names.length;
  if (total === 0) return;
  const more = total > names.length ? ` and ${total - names.length} more` : "";
  process.stderr.write(`worksnap: skipped ${total} path${total === 1 ? "" : "s"} that cannot be read: ${names.join(", ")}${more}\n`);
}
