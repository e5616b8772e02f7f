import { canonicalJson } from "../../core/canonical-json";
import type { ErrorCode, ErrorDetails } from "../../core/errors";
import type { Fingerprint } from "../../repo/fingerprint";
import { fingerprintText, lines, pathText, raw, short, shortenIds } from "./text";

/** Details an error's text never repeats: the stack of an internal failure stays in logs, not in a model's context. */
const NEVER_SHOWN = new Set(["stack", "fingerprint", "changed", "files", "files_total"]);

/**
 * An error as the model reads it: `error CODE: message`, then the details the
 * message does not already say, one `key: value` per line. Hosts such as
 * Claude Code drop structuredContent on errors, so this text carries
 * everything needed to recover: STALE_LEASE names the files that changed
 * (with the blob prefix read and the current one) and the current
 * fingerprint; a write refused because files changed since the session read
 * them (REPO_CHANGED, reason stale_read) shows each file's diff as raw text;
 * ids are shortened to prefixes the tools accept back.
 */
export function renderError(e: { code: ErrorCode; message: string; details: ErrorDetails }): string {
  const message = shortenIds(e.message);
  const details = e.details ?? {};
  const out = [`error ${e.code}: ${message}`];
  const changed = details.changed;
  if (Array.isArray(changed)) {
    for (const c of changed as { path: string; read_blob?: string | null; read_bytes?: number; current_blob?: string | null }[]) {
      const was = c.read_blob ? `read ${short(c.read_blob)}` : c.read_blob === null ? "absent when read" : c.read_bytes !== undefined ? `its first ${c.read_bytes} bytes read` : null;
      const now = c.current_blob === null ? "now deleted" : c.current_blob ? `now ${short(c.current_blob)}` : null;
      out.push(`changed: ${pathText(c.path)}${was || now ? ` (${[was, now].filter(Boolean).join(", ")})` : ""}`);
    }
  }
  if (details.reason === "stale_read" && Array.isArray(details.files)) out.push(...staleFileLines(details.files as StaleFileText[]));
  const fp = details.fingerprint as Fingerprint | null | undefined;
  if (fp && typeof fp === "object") out.push(`fingerprint: ${fingerprintText(fp)}`);
  for (const [key, value] of Object.entries(details)) {
    if (NEVER_SHOWN.has(key) || value === null || value === undefined) continue;
    const text = valueText(value);
    if (text === "" || message.includes(text)) continue;
    out.push(`${key}: ${text}`);
  }
  return lines(...out);
}

function valueText(value: unknown): string {
  if (typeof value === "string") return shortenIds(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === "string" || typeof v === "number")) return value.map((v) => shortenIds(String(v))).join(", ");
  }
  if (typeof value === "object" && Object.keys(value as object).length === 0) return "";
  return shortenIds(canonicalJson(value));
}

/** What a stale-read refusal or warning says of one file (ops/mutate/stale-reads.ts StaleFile). */
export interface StaleFileText {
  path: string;
  pinned: string | null;
  current: string | null;
  diff?: string;
  diff_complete: boolean;
}

/**
 * Each file that changed since the session read it: `changed since read:
 * path (read X, now Y)`, then what changed as a raw unified diff, or why
 * there is none.
 */
export function staleFileLines(files: StaleFileText[]): string[] {
  const out: string[] = [];
  for (const f of files) {
    const was = f.pinned === null ? "absent when read" : `read ${short(f.pinned)}`;
    const now = f.current === null ? "now deleted" : `now ${short(f.current)}`;
    out.push(`changed since read: ${pathText(f.path)} (${was}, ${now})`);
    if (f.diff !== undefined && f.diff !== "") out.push(raw(f.diff));
    if (f.diff === undefined) out.push("(the content read is not kept: read the file again)");
    else if (!f.diff_complete) out.push("(the diff is cut or binary: read the file again for the rest)");
  }
  return out;
}
