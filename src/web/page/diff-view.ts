/**
 * A unified diff as rows (parseDiff, no DOM) and as an HTML table with line
 * numbers on both sides and syntax colouring (renderDiff). Hunk bodies are
 * read by the lengths their headers give, so a removed line that reads
 * "--- x" is never taken for a file header.
 */
import { esc } from "./text";
import { highlightLine, languageFor, START, type LineState, type Token } from "./highlight";

export type RowKind = "meta" | "hunk" | "ctx" | "add" | "del" | "note";

export interface DiffRow {
  kind: RowKind;
  old: number | null;
  new: number | null;
  text: string;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;
/** File headers the card already says (paths, the index line) are not repeated as rows. */
const QUIET = /^(diff --git |--- |\+\+\+ |index )/;

export function parseDiff(diff: string): DiffRow[] {
  const rows: DiffRow[] = [];
  const lines = diff.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  let oldNo = 0;
  let newNo = 0;
  let oldLeft = 0;
  let newLeft = 0;
  for (const line of lines) {
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0];
      if (c === "+") {
        rows.push({ kind: "add", old: null, new: newNo++, text: line.slice(1) });
        newLeft--;
        continue;
      }
      if (c === "-") {
        rows.push({ kind: "del", old: oldNo++, new: null, text: line.slice(1) });
        oldLeft--;
        continue;
      }
      if (c === " " || line === "") {
        rows.push({ kind: "ctx", old: oldNo++, new: newNo++, text: line.slice(1) });
        oldLeft--;
        newLeft--;
        continue;
      }
    }
    if (line.startsWith("\\")) {
      rows.push({ kind: "note", old: null, new: null, text: line.slice(2) });
      continue;
    }
    const m = HUNK.exec(line);
    if (m) {
      oldNo = Number(m[1]);
      newNo = Number(m[3]);
      oldLeft = m[2] === undefined ? 1 : Number(m[2]);
      newLeft = m[4] === undefined ? 1 : Number(m[4]);
      rows.push({ kind: "hunk", old: null, new: null, text: line });
      continue;
    }
    oldLeft = 0;
    newLeft = 0;
    if (!QUIET.test(line)) rows.push({ kind: "meta", old: null, new: null, text: line });
  }
  return rows;
}

function tokensHtml(tokens: Token[]): string {
  return tokens.map((t) => (t.kind ? `<span class="t-${t.kind}">${esc(t.text)}</span>` : esc(t.text))).join("");
}

const SIGN: Record<RowKind, string> = { add: "+", del: "−", ctx: "", hunk: "", meta: "", note: "" };

/**
 * The rows as table rows. Each side's lines are coloured in order (context
 * lines continue both sides), so a comment or string that spans lines is
 * coloured through. At most `limit` rows; the caller offers the rest.
 */
export function renderDiff(rows: DiffRow[], path: string, limit = Number.POSITIVE_INFINITY): string {
  const lang = languageFor(path);
  let oldState: LineState = START;
  let newState: LineState = START;
  const out: string[] = [];
  for (const r of rows.slice(0, limit)) {
    if (r.kind === "hunk") {
      oldState = START;
      newState = START;
      const m = HUNK.exec(r.text);
      const context = m?.[5]?.trim() ?? "";
      out.push(`<tr class="d-hunk"><td class="ln" colspan="2"></td><td class="sg"></td><td class="code"><span class="hunk-range">${esc(r.text.slice(0, r.text.length - (m?.[5]?.length ?? 0)))}</span>${context ? ` <span class="hunk-ctx">${esc(context)}</span>` : ""}</td></tr>`);
      continue;
    }
    if (r.kind === "meta" || r.kind === "note") {
      out.push(`<tr class="d-${r.kind}"><td class="ln" colspan="2"></td><td class="sg"></td><td class="code">${esc(r.text)}</td></tr>`);
      continue;
    }
    let html: string;
    if (r.kind === "del") {
      const h = highlightLine(lang, r.text, oldState);
      oldState = h.state;
      html = tokensHtml(h.tokens);
    } else {
      const h = highlightLine(lang, r.text, newState);
      newState = h.state;
      if (r.kind === "ctx") oldState = highlightLine(lang, r.text, oldState).state;
      html = tokensHtml(h.tokens);
    }
    out.push(
      `<tr class="d-${r.kind}"><td class="ln" data-ln="${r.old ?? ""}"></td><td class="ln" data-ln="${r.new ?? ""}"></td><td class="sg">${SIGN[r.kind]}</td><td class="code">${html || " "}</td></tr>`,
    );
  }
  return `<table class="diff"><colgroup><col class="c-ln"><col class="c-ln"><col class="c-sg"><col></colgroup><tbody>${out.join("")}</tbody></table>`;
}
