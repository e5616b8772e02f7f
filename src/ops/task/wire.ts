/**
 * The task layer's wire grammar (spec 003): one line
 * `🧢|TYPE|field|field|...`, a line `---`, then a plain-language summary.
 *
 * Fields come in the spec's order for every TYPE. In the default labeled mode
 * a field is `label:value`; in compact mode only the value, by position. Some
 * fields are positional in both modes (the survey JSON of `E`, the entries of
 * an `R` list, the file names of an `R` restore): they follow the labeled ones.
 *
 * Values are escaped so that a field never breaks the line grammar:
 * - a run of whitespace or control characters (spaces, tabs, newlines, NUL,
 *   ...) becomes one `→`; leading and trailing whitespace is dropped;
 * - `\`, `|`, a literal `→` and a literal `…` are escaped with a backslash
 *   (`\\`, `\|`, `\→`, `\…`), so `→` always means a space and `…` a cut;
 * - an empty value is `-`; a literal `-` is `\-`;
 * - a value longer than its field's limit is cut at a character boundary
 *   (never inside an escape) and ends with an unescaped `…`.
 * Labels never contain `:`; a value may (`src/a.ts:12`): a labeled field is
 * split at its first `:`. parseWire is the exact inverse (up to a cut).
 */

export const WIRE_PREFIX = "🧢";
export const WIRE_SEPARATOR = "---";

export type WireType = "S" | "C" | "X" | "E" | "R" | "D" | "L" | "V" | "!";

/** The labeled fields of every TYPE, in the spec's order. `R` has two shapes (a list and a restore). */
export const WIRE_LABELS = {
  S: ["id", "snap", "risk", "prot", "dirty", "status", "learn"],
  C: ["status", "err", "warn", "ts", "lint", "tests", "issues"],
  X: ["risk", "prot", "dirty", "learn"],
  E: ["status", "learn", "files", "lines", "summary"],
  R_LIST: ["count"],
  R_RESTORE: ["status", "files"],
  D: ["from", "to", "added", "removed", "changed"],
  L: ["status", "id", "type"],
  V: ["status", "type", "count", "promote", "auto"],
  "!": ["code", "reason"],
} as const;

/** One field: `label` names a labeled field (shown as `label:value` unless compact); unlabeled fields are positional. */
export interface WireField {
  label?: string;
  value: string;
}

export interface WireResponse {
  type: WireType;
  fields: WireField[];
  /** Plain language; carries everything essential (the spec's fallback). */
  summary: string;
}

/** Default cut for free-text values; ids, counts and paths have their own. */
export const VALUE_MAX = 100;

const WHITESPACE_OR_CONTROL = /[\s\p{Cc}\p{Zl}\p{Zp}]/u;
const ESCAPED = new Set(["\\", "|", "→", "…"]);

/** Escapes one value for the wire line (see the module comment); `max` counts characters of the escaped value. */
export function wireValue(raw: string | number, max = VALUE_MAX): string {
  const text = String(raw);
  const tokens: string[] = [];
  let pendingSpace = false;
  for (const ch of text) {
    if (WHITESPACE_OR_CONTROL.test(ch)) {
      pendingSpace = tokens.length > 0;
      continue;
    }
    if (pendingSpace) tokens.push("→");
    pendingSpace = false;
    tokens.push(ESCAPED.has(ch) ? `\\${ch}` : ch);
  }
  if (tokens.length === 0) return "-";
  if (tokens.length === 1 && tokens[0] === "-") return "\\-";
  const sizes = tokens.map((t) => [...t].length);
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= max) return tokens.join("");
  let out = "";
  let length = 0;
  for (let i = 0; i < tokens.length && length + (sizes[i] as number) <= max - 1; i++) {
    out += tokens[i];
    length += sizes[i] as number;
  }
  return `${out}…`;
}

/** The first line of a response: prefix, TYPE and fields, labeled or compact. */
export function wireLine(type: WireType, fields: readonly WireField[], compact: boolean): string {
  const parts = [WIRE_PREFIX, type];
  for (const f of fields) parts.push(f.label !== undefined && !compact ? `${f.label}:${f.value}` : f.value);
  return parts.join("|");
}

/** A run of line breaks or other control characters (C0, DEL, C1, U+2028, U+2029). */
const CONTROL_RUN = /[\p{Cc}\p{Zl}\p{Zp}]+/gu;

/**
 * The whole response text: the wire line, `---`, the summary. The summary is one paragraph: a line break or
 * control character in the text it quotes (a title, a learning, a path, a tool's message) is one space there,
 * so no quoted text can start a line that reads as a wire line or a separator, or reach a terminal as an
 * escape sequence.
 */
export function renderWire(res: WireResponse, compact: boolean): string {
  return `${wireLine(res.type, res.fields, compact)}\n${WIRE_SEPARATOR}\n${res.summary.replace(CONTROL_RUN, " ")}`;
}

export interface ParsedWire {
  type: WireType;
  compact: boolean;
  /** Labeled fields by label, unescaped (`→` back to a space). */
  fields: Record<string, string>;
  /** Positional fields after the labeled ones, unescaped. */
  rest: string[];
  /** Labels of values that were cut (they ended with an unescaped `…`). */
  cut: string[];
  summary: string;
}

/** The labels a TYPE's line starts with; an `R` line is a restore when its first field is a status. */
function labelsFor(type: WireType, first: string, compact: boolean): readonly string[] {
  if (type !== "R") return WIRE_LABELS[type];
  const isRestore = compact ? !/^\d+$/.test(first) : first.startsWith("status:");
  return isRestore ? WIRE_LABELS.R_RESTORE : WIRE_LABELS.R_LIST;
}

/** Splits a line at unescaped `|`. */
function splitFields(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (ch === "\\" && i + 1 < line.length) {
      cur += ch + line[i + 1];
      i++;
    } else if (ch === "|") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Unescapes one value; `cut` is true when it ended with an unescaped `…`. */
export function unescapeValue(value: string): { text: string; cut: boolean } {
  if (value === "-") return { text: "", cut: false };
  let out = "";
  let cut = false;
  const chars = [...value];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i] as string;
    if (ch === "\\" && i + 1 < chars.length) {
      out += chars[++i];
    } else if (ch === "→") out += " ";
    else if (ch === "…" && i === chars.length - 1) cut = true;
    else out += ch;
  }
  return { text: out, cut };
}

/** Parses a response text back into its fields (tests, and clients that want fields). Throws on a malformed line. */
export function parseWire(text: string): ParsedWire {
  const nl = text.indexOf("\n");
  const line = nl < 0 ? text : text.slice(0, nl);
  const after = nl < 0 ? "" : text.slice(nl + 1);
  if (!after.startsWith(`${WIRE_SEPARATOR}\n`) && after !== WIRE_SEPARATOR) throw new Error("no --- line after the wire line");
  const summary = after.slice(WIRE_SEPARATOR.length + 1);
  const parts = splitFields(line);
  if (parts[0] !== WIRE_PREFIX) throw new Error(`the line does not start with ${WIRE_PREFIX}|`);
  const type = parts[1] as WireType;
  if (!(type in WIRE_LABELS) && type !== "R") throw new Error(`unknown TYPE ${String(parts[1])}`);
  const values = parts.slice(2);
  const first = values[0] ?? "";
  const firstLabel = (type === "R" ? "" : WIRE_LABELS[type as Exclude<WireType, "R">][0]) as string;
  const compact = type === "R" ? !/^(count|status):/.test(first) : !first.startsWith(`${firstLabel}:`);
  const labels = labelsFor(type, first, compact);
  const fields: Record<string, string> = {};
  const cut: string[] = [];
  values.slice(0, labels.length).forEach((raw, i) => {
    const label = labels[i] as string;
    let value = raw;
    if (!compact) {
      if (!raw.startsWith(`${label}:`)) throw new Error(`field ${i + 1} of ${type} should be ${label}:…, got ${raw}`);
      value = raw.slice(label.length + 1);
    }
    const u = unescapeValue(value);
    fields[label] = u.text;
    if (u.cut) cut.push(label);
  });
  if (values.length < labels.length) throw new Error(`${type} needs ${labels.length} fields, got ${values.length}`);
  const rest = values.slice(labels.length).map((v) => unescapeValue(v).text);
  return { type, compact, fields, rest, cut, summary };
}
