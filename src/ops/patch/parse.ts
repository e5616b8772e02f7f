/**
 * Parses a unified diff, plain (`---`/`+++`) or git style (`diff --git` with
 * its extended headers), with any number of files. Text outside file patches
 * (a commit message, an email, prose around the patch) is skipped. Anything
 * that cannot be read becomes a `malformed` reject naming the patch line;
 * parsing never throws for bad content.
 *
 * The text is encoded to UTF-8 and viewed as a byte string, so hunk lines
 * carry the exact bytes the file must contain. A patch given as bytes (a
 * patch file, read by the CLI) is taken as it is: its lines may hold bytes
 * that are not UTF-8 (a file in another encoding), as `git apply` takes them.
 */
import { type FileMode, isFileMode, modeOfPermissions } from "../../core/file-mode";
import { compareUtf8 } from "../../core/byte-order";
import type { RepoPath } from "../../core/repo-path";
import { takeUtf8 } from "../../repo/decoded-bytes";
import { type NativeModule, nativeModule } from "../../repo/native";
import { type BinaryPatch, parseBinaryHunks } from "./binary-patch";
import { bytesToByteString, byteStringToText, textToByteString } from "./byte-string";
import { checkName, DEV_NULL, gitHeaderNames, headerName, plainName, stripPrefix } from "./parse-names";
import { type ParsedHunkBody, type PatchLines, headerLine, hunkLinesOf, isFileStart, isHeaderPair, isHunkHeader, parseHunkAt } from "./parse-hunk";
import { type FilePatch, type FileReject, type HunkBody, type HunkLine, type HunkReject, type PatchHunk, type PatchSource } from "./types";

export interface ParsedPatch {
  files: FilePatch[];
  warnings: string[];
  rejects: FileReject[];
}

/** A file section's names and headers before they are validated. */
interface Section {
  oldName: string | null | undefined;
  newName: string | null | undefined;
  oldMode?: FileMode;
  newMode?: FileMode;
  rename: boolean;
  copy: boolean;
  binary: boolean;
  /** A binary patch's data (`GIT binary patch`); a `Binary files ... differ` line has none. */
  binaryPatch?: BinaryPatch;
  /** The object ids of the `index` line, as written. */
  oids?: { old: string; new: string };
  git: boolean;
  startLine: number;
}

class PatchParser {
  readonly files: FilePatch[] = [];
  readonly warnings: string[] = [];
  private readonly rejects = new Map<string, HunkReject[]>();
  private readonly hunkCounters = new Map<string, number>();

  constructor(
    private readonly lines: PatchLines,
    private readonly plain?: PlainHunks,
  ) {}

  run(): ParsedPatch {
    const lines = this.lines;
    let i = 0;
    while (i < lines.length) {
      const line = lines.at(i)!;
      if (line.startsWith("diff --git ")) i = this.gitSection(i);
      else if (isHeaderPair(lines, i)) i = this.plainSection(i);
      else if (isHunkHeader(line)) i = this.orphanHunk(i);
      else i++;
    }
    if (this.files.length === 0 && this.rejects.size === 0) {
      this.reject("", 0, "the patch contains no file changes: expected `diff --git` or `--- a/path` / `+++ b/path` headers followed by hunks");
    }
    const rejects = [...this.rejects.entries()]
      .sort(([a], [b]) => compareUtf8(a, b))
      .map(([path, hunks]) => ({ path, hunks: hunks.sort((x, y) => x.index - y.index) }));
    return { files: this.files, warnings: this.warnings, rejects };
  }

  private reject(path: string, index: number, message: string): void {
    const list = this.rejects.get(path) ?? [];
    list.push({ index, reason: "malformed", message });
    this.rejects.set(path, list);
  }

  private nextHunkIndex(subject: string): number {
    const n = this.hunkCounters.get(subject) ?? 0;
    this.hunkCounters.set(subject, n + 1);
    return n;
  }

  /** A parsed hunk as the plan uses it (ParsedHunk). */
  private patchHunk(index: number, h: ParsedHunkBody): PatchHunk {
    return new ParsedHunk(index, h.oldStart, h.oldLines, h.newStart, h.newLines, this.lines, h.from, h.to, this.plain?.source, h.lines);
  }

  /**
   * The hunks the native reader read from line j on, one after the other, as
   * ParsedHunks: the loop a large patch spends its parse in, kept short.
   * Returns the line after them.
   */
  private plainRun(j: number, subject: string, hunks: PatchHunk[]): number {
    const plain = this.plain!;
    const t = plain.hunks;
    let r = this.plainAt(j);
    if (r < 0) return j;
    let index = this.hunkCounters.get(subject) ?? 0;
    while (r >= 0) {
      const to = t[r + 5]!;
      hunks.push(new ParsedHunk(index++, t[r + 1]!, t[r + 2]!, t[r + 3]!, t[r + 4]!, this.lines, j + 1, to, plain.source));
      j = to;
      r = this.plainAt(j);
    }
    this.hunkCounters.set(subject, index);
    return j;
  }

  /**
   * The offset of the native reader's record for a hunk whose header is line
   * j, or -1. The records are in line order and the parser only moves
   * forward, so a cursor finds them (a line behind it is read here instead).
   */
  private plainAt(j: number): number {
    const plain = this.plain!;
    const t = plain.hunks;
    let r = plain.next;
    while (r < t.length && t[r]! < j) r += 6;
    plain.next = r;
    return r < t.length && t[r] === j ? r : -1;
  }

  private orphanHunk(i: number): number {
    const parsed = parseHunkAt(this.lines, i);
    this.reject("", this.nextHunkIndex(""), `patch line ${i + 1}: hunk has no file header (--- a/path, +++ b/path) before it`);
    return Math.max(parsed.next, i + 1);
  }

  private gitSection(i: number): number {
    const lines = this.lines;
    const names = gitHeaderNames(headerLine(lines.at(i)!).slice("diff --git ".length));
    const s: Section = { oldName: names?.old, newName: names?.new, rename: false, copy: false, binary: false, git: true, startLine: i };
    let newFile = false;
    let deleted = false;
    let badMode: string | undefined;
    const mode = (v: string): FileMode | undefined => {
      const m = canonicalMode(v);
      if (!m) badMode = v;
      return m;
    };
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = headerLine(lines.at(j)!);
      if (l.startsWith("old mode ")) s.oldMode = mode(l.slice(9));
      else if (l.startsWith("new mode ")) s.newMode = mode(l.slice(9));
      else if (l.startsWith("deleted file mode ")) (deleted = true), (s.oldMode = mode(l.slice(18)));
      else if (l.startsWith("new file mode ")) (newFile = true), (s.newMode = mode(l.slice(14)));
      else if (l.startsWith("rename from ")) (s.rename = true), (s.oldName = plainName(l.slice(12)));
      else if (l.startsWith("rename to ")) (s.rename = true), (s.newName = plainName(l.slice(10)));
      else if (l.startsWith("copy from ")) (s.copy = true), (s.oldName = plainName(l.slice(10)));
      else if (l.startsWith("copy to ")) (s.copy = true), (s.newName = plainName(l.slice(8)));
      else if (l.startsWith("similarity index ") || l.startsWith("dissimilarity index ")) continue;
      else if (l.startsWith("index ")) {
        const m = /^index ([0-9a-fA-F]+)\.\.([0-9a-fA-F]+)(?: (\d+))?$/.exec(l);
        if (m) s.oids = { old: m[1]!.toLowerCase(), new: m[2]!.toLowerCase() };
        // Like git: the mode on an index line is what the file is expected to have, not a change.
        if (m?.[3] && !s.oldMode) s.oldMode = mode(m[3]);
      } else if (l.startsWith("Binary files ") && l.endsWith(" differ")) {
        s.binary = true;
        j++;
        break;
      } else if (l === "GIT binary patch") {
        s.binary = true;
        const parsed = parseBinaryHunks(lines, j + 1);
        j = parsed.next;
        if (!parsed.ok) return this.badSection(s, j, parsed.message);
        s.binaryPatch = { oldOid: s.oids?.old ?? "", newOid: s.oids?.new ?? "", forward: parsed.forward, reverse: parsed.reverse };
        break;
      } else if (isHeaderPair(lines, j)) {
        const minus = headerName(l.slice(4));
        const plus = headerName(headerLine(lines.at(j + 1)!).slice(4));
        if (!s.rename && !s.copy) {
          if (minus !== undefined) s.oldName = minus;
          if (plus !== undefined) s.newName = plus;
        }
        if (minus === null) newFile = true;
        if (plus === null) deleted = true;
        j += 2;
        break;
      } else break;
    }
    if (newFile) s.oldName = null;
    if (deleted) s.newName = null;
    if (!s.rename && !s.copy && typeof s.oldName === "string" && typeof s.newName === "string" && s.oldName !== s.newName) {
      return this.badSection(s, j, `patch line ${i + 1}: the old and new names differ (${JSON.stringify(byteStringToText(s.oldName))}, ${JSON.stringify(byteStringToText(s.newName))}) but there is no "rename from/to" or "copy from/to" header`);
    }
    if (badMode !== undefined) {
      return this.badSection(s, j, `patch line ${i + 1}: file mode ${JSON.stringify(byteStringToText(badMode))} is not supported (only 100644, 100755 and 120000)`);
    }
    return this.finishSection(s, j);
  }

  private plainSection(i: number): number {
    const lines = this.lines;
    const minus = headerName(headerLine(lines.at(i)!).slice(4));
    const plus = headerName(headerLine(lines.at(i + 1)!).slice(4));
    const s: Section = { oldName: minus, newName: plus, rename: false, copy: false, binary: false, git: false, startLine: i };
    if (typeof minus === "string" && typeof plus === "string" && minus !== plus) {
      // git apply's rule for traditional patches: the shorter name is the file.
      const chosen = plus.length < minus.length ? plus : minus;
      this.warnings.push(
        `patch line ${i + 1}: --- and +++ name different files (${JSON.stringify(byteStringToText(minus))}, ${JSON.stringify(byteStringToText(plus))}); patching ${JSON.stringify(byteStringToText(chosen))} (use a git patch with "rename from/to" to rename)`,
      );
      s.oldName = s.newName = chosen;
    }
    return this.finishSection(s, i + 2);
  }

  /** Validates names, reads the hunks, and records the file patch or its rejects. */
  private finishSection(s: Section, j: number): number {
    const lines = this.lines;
    const problems: { display: string; message: string }[] = [];
    const resolve = (name: string | null | undefined): RepoPath | null | undefined => {
      if (name === null || name === undefined) return name;
      const checked = checkName(name);
      if (checked.ok) return checked.path;
      problems.push(checked);
      return undefined;
    };
    const oldPath = resolve(s.oldName);
    const newPath = resolve(s.newName);
    if (problems.length > 0) {
      const messages = [...new Set(problems.map((p) => p.message))];
      return this.badSection(s, j, messages.join("; "), problems[0]!.display);
    }
    if (oldPath === undefined || newPath === undefined || (oldPath === null && newPath === null)) {
      return this.badSection(s, j, `patch line ${s.startLine + 1}: cannot tell which file this patch changes`);
    }
    const subject: string = oldPath ?? newPath!;
    const hunks: PatchHunk[] = [];
    while (j < lines.length) {
      if (this.plain) {
        j = this.plainRun(j, subject, hunks);
        if (j >= lines.length) break;
      }
      if (!isHunkHeader(lines.at(j)!)) {
        const resume = this.nextHunkAfter(j);
        if (!resume) break;
        if (resume.garbage >= 0) {
          const text = JSON.stringify(byteStringToText(lines.at(resume.garbage)!));
          this.reject(subject, this.hunkCounters.get(subject) ?? 0, `patch line ${resume.garbage + 1}: unexpected text ${text} between hunks`);
        }
        j = resume.at;
        continue;
      }
      const index = this.nextHunkIndex(subject);
      const parsed = parseHunkAt(lines, j);
      j = Math.max(parsed.next, j + 1);
      if (!parsed.ok) {
        this.reject(subject, index, parsed.message);
        continue;
      }
      const h = parsed.hunk;
      if (parsed.recounted) {
        this.warnings.push(
          `${subject}: hunk ${index} header says -${h.oldStart},${h.statedOld} +${h.newStart},${h.statedNew} but its body has ${h.oldLines} old and ${h.newLines} new lines; used the body`,
        );
      }
      hunks.push(this.patchHunk(index, h));
    }
    if (!s.git && hunks.length === 0) {
      // A plain header means nothing without hunks; if they were all malformed, those rejects say enough.
      if (!this.rejects.has(subject)) this.reject(subject, this.hunkCounters.get(subject) ?? 0, `patch line ${s.startLine + 1}: file header without hunks`);
      return j;
    }
    const file: FilePatch = { oldPath, newPath, rename: s.rename, binary: s.binary, hunks };
    if (s.binaryPatch) file.binaryPatch = s.binaryPatch;
    if (s.copy) file.copy = true;
    if (s.oldMode) file.oldMode = s.oldMode;
    if (s.newMode) file.newMode = s.newMode;
    this.files.push(file);
    return j;
  }

  /**
   * After a hunk, where the next "@@" of the same file resumes: blank lines
   * before it are tolerated, other text before it is garbage. null when a new
   * file header or the end comes first (text there is commentary, skipped).
   */
  private nextHunkAfter(j: number): { at: number; garbage: number } | null {
    const lines = this.lines;
    let garbage = -1;
    for (let k = j; k < lines.length; k++) {
      if (isFileStart(lines, k)) return null;
      if (isHunkHeader(lines.at(k)!)) return { at: k, garbage };
      if (garbage < 0 && lines.at(k)!.trim() !== "") garbage = k;
    }
    return null;
  }

  /** Records a section that cannot be used and skips its hunks. */
  private badSection(s: Section, j: number, message: string, display?: string): number {
    const lines = this.lines;
    const path = display ?? byteStringToText(stripPrefix(s.newName ?? s.oldName ?? ""));
    this.reject(path === DEV_NULL ? "" : path, 0, message);
    while (j < lines.length && !isFileStart(lines, j)) j++;
    return j;
  }
}

/** git's canon_mode: any regular-file mode becomes 100644 or 100755. */
function canonicalMode(value: string): FileMode | undefined {
  if (isFileMode(value)) return value;
  if (/^100[0-7]{3}$/.test(value)) return modeOfPermissions(parseInt(value.slice(3), 8));
  return undefined;
}

/**
 * A hunk as parsed. When the native reader read it, its lines and its header
 * text are read from the patch on first use: the native apply needs neither.
 */
class ParsedHunk implements PatchHunk {
  body?: HunkBody;
  readonly #patch: PatchLines;
  readonly #from: number;
  readonly #to: number;
  #lines: HunkLine[] | undefined;
  #header: string | undefined;

  /** The body is lines [from, to) of `patch`; `source`, the patch's bytes when the native reader has them. */
  constructor(
    readonly index: number,
    readonly oldStart: number,
    readonly oldLines: number,
    readonly newStart: number,
    readonly newLines: number,
    patch: PatchLines,
    from: number,
    to: number,
    source?: PatchSource,
    lines?: HunkLine[],
  ) {
    this.#patch = patch;
    this.#from = from;
    this.#to = to;
    this.#lines = lines;
    if (source) this.body = { patch: source, from, to };
  }

  get lines(): HunkLine[] {
    return (this.#lines ??= hunkLinesOf(this.#patch, this.#from, this.#to));
  }

  /** The "@@" line before the body. */
  get header(): string {
    return (this.#header ??= byteStringToText(headerLine(this.#patch.at(this.#from - 1)!)));
  }
}

/** The hunks the native reader read (patchHunks' records, in line order), and the first record not passed yet. */
interface PlainHunks {
  source: PatchSource;
  hunks: Int32Array;
  next: number;
}

const encoder = new TextEncoder();

/** A patch's lines cut from its bytes when the parser asks for one: it reads the headers, the native reader the bodies. */
class PatchBytes implements PatchLines {
  readonly length: number;
  private readonly view: Buffer;

  constructor(private readonly source: PatchSource) {
    this.length = source.starts.length - 1;
    this.view = Buffer.from(source.bytes.buffer, source.bytes.byteOffset, source.bytes.byteLength);
  }

  at(j: number): string | undefined {
    if (!(j >= 0 && j < this.length)) return undefined;
    const start = this.source.starts[j]!;
    let end = this.source.starts[j + 1]!;
    if (end > start && this.view[end - 1] === 10) end--;
    return this.view.toString("latin1", start, end);
  }
}

/**
 * With the native module a patch is read from its UTF-8 bytes: the native
 * reader reads every hunk body it can in one pass, the parser then cuts out
 * only the header lines, and a hunk's lines are read only when something
 * asks for them (the native apply works from the same bytes, apply.ts).
 * A 5,000-hunk patch took a one-shot process about 25 ms of cold JavaScript
 * to split and read.
 */
function parseBytes(text: string | Uint8Array, native: NativeModule): ParsedPatch | undefined {
  // a request's patch: the bytes its string was decoded from, when the decoder still has them
  const bytes = typeof text === "string" ? (takeUtf8(text) ?? encoder.encode(text)) : text;
  const starts = native.lineStarts(bytes);
  if (!starts) return undefined;
  const source: PatchSource = { bytes, starts };
  return new PatchParser(new PatchBytes(source), { source, hunks: native.patchHunks(bytes, starts), next: 0 }).run();
}

/** `native`: the module whose reader to use (tests pass null for the TypeScript path alone). */
export function parsePatch(text: string | Uint8Array, native: NativeModule | null = nativeModule()): ParsedPatch {
  const read = native ? parseBytes(text, native) : undefined;
  if (read) return read;
  const lines = (typeof text === "string" ? textToByteString(text) : bytesToByteString(text)).split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return new PatchParser(lines).run();
}
