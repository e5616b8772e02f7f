/**
 * A small syntax colouring for diffs: keywords, strings, comments, numbers,
 * literals, types, calls, and tags in markup, for the common languages,
 * picked by file name. It works a line at a time and carries what spans
 * lines (a block comment, a multi-line string) in a state, so a diff colours
 * each side's lines in order. No DOM here: the page renders the tokens.
 */
export type TokenKind = "kw" | "str" | "com" | "num" | "lit" | "type" | "fn" | "tag" | "attr" | "meta";

export interface Token {
  kind: TokenKind | null;
  text: string;
}

/** What an unfinished line leaves open: the closing text awaited, and what it closes. */
export interface LineState {
  close: string | null;
  kind: "com" | "str" | null;
}

export const START: LineState = { close: null, kind: null };

interface Language {
  name: string;
  line: string[];
  block: [string, string][];
  /** Strings that may span lines, as [open, close]. */
  long: [string, string][];
  quotes: string;
  keywords: Set<string>;
  literals: Set<string>;
  types: Set<string>;
  /** Capitalised identifiers are types (most C-family languages). */
  capitalTypes: boolean;
  caseInsensitive: boolean;
  /** "@" decorators/annotations, "#" preprocessor lines, "$" shell variables. */
  meta: "@" | "#" | "$" | null;
  /** Keys before ":" or "=" (JSON, YAML, TOML, CSS). */
  keys: ":" | "=" | null;
  markup: boolean;
  markdown: boolean;
}

const words = (s: string) => new Set(s.split(" ").filter(Boolean));

const JS_KW =
  "abstract as async await break case catch class const continue debugger declare default delete do else enum export extends finally for from function get if implements import in instanceof interface is keyof let module namespace new of override private protected public readonly return satisfies set static super switch this throw try type typeof var void while with yield";
const C_KW =
  "auto break case char const continue default do double else enum extern float for goto if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while bool class namespace template typename public private protected virtual override new delete this throw try catch using operator friend constexpr noexcept nullptr final import package extends implements interface instanceof synchronized throws transient native strictfp var val fun object when is in out internal companion data sealed lateinit suspend";

function lang(name: string, over: Partial<Language>): Language {
  return {
    name,
    line: [],
    block: [],
    long: [],
    quotes: "\"'",
    keywords: new Set(),
    literals: words("true false null"),
    types: new Set(),
    capitalTypes: false,
    caseInsensitive: false,
    meta: null,
    keys: null,
    markup: false,
    markdown: false,
    ...over,
  };
}

const LANGS: Record<string, Language> = {
  ts: lang("typescript", {
    line: ["//"],
    block: [["/*", "*/"]],
    long: [["`", "`"]],
    keywords: words(JS_KW),
    literals: words("true false null undefined NaN Infinity"),
    types: words("string number boolean bigint symbol object unknown never any void Promise Record Array Map Set"),
    capitalTypes: true,
    meta: "@",
  }),
  py: lang("python", {
    line: ["#"],
    long: [
      ['"""', '"""'],
      ["'''", "'''"],
    ],
    keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda match case nonlocal not or pass raise return try while with yield self cls"),
    literals: words("True False None"),
    types: words("int float str bytes bool list dict set tuple object"),
    capitalTypes: true,
    meta: "@",
  }),
  rs: lang("rust", {
    line: ["//"],
    block: [["/*", "*/"]],
    quotes: '"',
    keywords: words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while"),
    literals: words("true false None Some Ok Err"),
    types: words("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Result Box"),
    capitalTypes: true,
    meta: "#",
  }),
  go: lang("go", {
    line: ["//"],
    block: [["/*", "*/"]],
    long: [["`", "`"]],
    keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
    literals: words("true false nil iota"),
    types: words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any"),
    capitalTypes: false,
  }),
  c: lang("c", { line: ["//"], block: [["/*", "*/"]], keywords: words(C_KW), literals: words("true false NULL nullptr null"), capitalTypes: true, meta: "#" }),
  java: lang("java", { line: ["//"], block: [["/*", "*/"]], long: [['"""', '"""']], keywords: words(C_KW), literals: words("true false null"), capitalTypes: true, meta: "@" }),
  rb: lang("ruby", {
    line: ["#"],
    keywords: words("alias and begin break case class def defined do else elsif end ensure for if in module next not or redo rescue retry return self super then undef unless until when while yield require attr_reader attr_accessor"),
    literals: words("true false nil"),
    capitalTypes: true,
  }),
  sh: lang("shell", {
    line: ["#"],
    keywords: words("if then else elif fi for while until do done case esac in function return local export readonly set unset shift exit source echo cd"),
    literals: words("true false"),
    meta: "$",
  }),
  json: lang("json", { quotes: '"', keys: ":" }),
  yaml: lang("yaml", { line: ["#"], keys: ":", literals: words("true false null yes no on off ~") }),
  toml: lang("toml", { line: ["#", ";"], long: [['"""', '"""']], keys: "=", meta: "#" }),
  css: lang("css", { block: [["/*", "*/"]], keys: ":", literals: words("important inherit initial unset none auto"), meta: "@" }),
  sql: lang("sql", {
    line: ["--"],
    block: [["/*", "*/"]],
    quotes: "'\"",
    caseInsensitive: true,
    keywords: words(
      "select from where and or not insert into values update set delete create table index view drop alter add column primary key foreign references join left right inner outer on group by order having limit offset as distinct union all case when then else end is in like between exists default unique constraint begin commit rollback",
    ),
    literals: words("null true false"),
    types: words("int integer bigint smallint text varchar char boolean date timestamp numeric real float double blob"),
  }),
  html: lang("markup", { block: [["<!--", "-->"]], markup: true }),
  md: lang("markdown", { markdown: true }),
};

const BY_EXT: Record<string, string> = {};
for (const [k, exts] of Object.entries({
  ts: "ts tsx mts cts js jsx mjs cjs",
  py: "py pyi",
  rs: "rs",
  go: "go",
  c: "c h cc cpp cxx hh hpp hxx m mm cs swift",
  java: "java kt kts scala groovy dart",
  rb: "rb rake gemspec",
  sh: "sh bash zsh fish",
  json: "json jsonc json5",
  yaml: "yaml yml",
  toml: "toml ini cfg conf",
  css: "css scss sass less",
  sql: "sql",
  html: "html htm xml svg vue xhtml",
  md: "md markdown",
})) {
  for (const e of exts.split(" ")) BY_EXT[e] = k;
}
const BY_NAME: Record<string, string> = { Dockerfile: "sh", Makefile: "sh", Rakefile: "rb", Gemfile: "rb", ".bashrc": "sh", ".zshrc": "sh" };

export function languageFor(path: string): string | null {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const byName = BY_NAME[name];
  if (byName) return byName;
  const dot = name.lastIndexOf(".");
  return dot > 0 ? (BY_EXT[name.slice(dot + 1).toLowerCase()] ?? null) : null;
}

const NUMBER = /^(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)[a-zA-Z%]*/;
const IDENT = /^[A-Za-z_$][\w$]*/;

/** Colours one line of `langKey` (from languageFor), continuing from `state`. */
export function highlightLine(langKey: string | null, line: string, state: LineState = START): { tokens: Token[]; state: LineState } {
  const l = langKey ? LANGS[langKey] : undefined;
  if (!l) return { tokens: [{ kind: null, text: line }], state: START };
  if (l.markdown) return { tokens: markdown(line), state: START };
  const out = new Emitter();
  let i = 0;
  let st = state;
  if (st.close !== null) {
    const end = line.indexOf(st.close);
    if (end < 0) {
      out.push(st.kind, line);
      return { tokens: out.tokens, state: st };
    }
    i = end + st.close.length;
    out.push(st.kind, line.slice(0, i));
    st = START;
  }
  const n = line.length;
  const lineStart = line.slice(0, i).trim() === "";
  if (l.meta === "#" && lineStart && /^\s*#\s*[a-z!\[]/.test(line.slice(i)) && l.name !== "toml") {
    out.push("meta", line.slice(i));
    return { tokens: out.tokens, state: START };
  }
  while (i < n) {
    const rest = line.slice(i);
    const c = line[i]!;
    if (l.line.some((p) => rest.startsWith(p) && (p !== "#" || l.name !== "shell" || i === 0 || /\s/.test(line[i - 1]!)))) {
      out.push("com", rest);
      break;
    }
    const block = l.block.find(([open]) => rest.startsWith(open));
    const long = block ? undefined : l.long.find(([open]) => rest.startsWith(open));
    if (block || long) {
      const [open, close] = (block ?? long)!;
      const kind = block ? "com" : "str";
      const end = line.indexOf(close, i + open.length);
      if (end < 0) {
        out.push(kind, rest);
        return { tokens: out.tokens, state: { close, kind } };
      }
      out.push(kind, line.slice(i, end + close.length));
      i = end + close.length;
      continue;
    }
    if (l.markup && c === "<") {
      const m = /^<\/?[A-Za-z][\w:.-]*/.exec(rest);
      if (m) {
        out.push("tag", m[0]);
        i += m[0].length;
        i = markupAttributes(line, i, out);
        continue;
      }
    }
    if (l.quotes.includes(c) && !l.markup) {
      const end = stringEnd(line, i);
      const text = line.slice(i, end);
      const key = l.keys === ":" && /^\s*:/.test(line.slice(end));
      out.push(key ? "attr" : "str", text);
      i = end;
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(line[i + 1] ?? ""))) {
      const prev = i > 0 ? line[i - 1]! : " ";
      const m = /[\w$]/.test(prev) ? null : NUMBER.exec(rest);
      if (m) {
        out.push("num", m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (l.meta === "@" && c === "@" && IDENT.test(line.slice(i + 1))) {
      const m = IDENT.exec(line.slice(i + 1))!;
      out.push("meta", `@${m[0]}`);
      i += 1 + m[0].length;
      continue;
    }
    if (l.meta === "$" && c === "$") {
      const m = /^\$(?:\{[^}]*\}|[\w@#?*!$-])/.exec(rest);
      if (m) {
        out.push("attr", m[0]);
        i += m[0].length;
        continue;
      }
    }
    if (l.name === "css" && c === "#" && /^#[0-9a-fA-F]{3,8}\b/.test(rest)) {
      const m = /^#[0-9a-fA-F]{3,8}/.exec(rest)!;
      out.push("num", m[0]);
      i += m[0].length;
      continue;
    }
    const id = /[A-Za-z_$]/.test(c) ? (l.name === "css" || l.name === "yaml" || l.name === "toml" ? /^[A-Za-z_][\w-]*/ : IDENT).exec(rest) : null;
    if (id) {
      const w = id[0];
      const after = line.slice(i + w.length);
      out.push(classify(l, w, after, line.slice(0, i)), w);
      i += w.length;
      continue;
    }
    out.push(null, c);
    i++;
  }
  return { tokens: out.tokens, state: START };
}

function classify(l: Language, w: string, after: string, before: string): TokenKind | null {
  const key = l.caseInsensitive ? w.toLowerCase() : w;
  if (l.keys === ":" && /^\s*:(?!:)/.test(after) && (l.name !== "css" || /^\s*$/.test(before) || /[{;]\s*$/.test(before))) return "attr";
  if (l.keys === "=" && /^\s*=/.test(after) && /^\s*$/.test(before)) return "attr";
  if (l.keywords.has(key)) return "kw";
  if (l.literals.has(key)) return "lit";
  if (l.types.has(key)) return "type";
  if (/^\s*\(/.test(after) && l.name !== "css" && l.name !== "yaml") return "fn";
  if (l.capitalTypes && /^[A-Z][a-z0-9]\w*$/.test(w)) return "type";
  return null;
}

/** The end of a string starting at `i` (its quote char), after backslash escapes; the end of the line if unterminated. */
function stringEnd(line: string, i: number): number {
  const q = line[i];
  let j = i + 1;
  while (j < line.length) {
    const ch = line[j];
    if (ch === "\\") j += 2;
    else if (ch === q) return j + 1;
    else j++;
  }
  return line.length;
}

/** Attributes and strings inside a tag, up to its ">". */
function markupAttributes(line: string, i: number, out: Emitter): number {
  while (i < line.length) {
    const c = line[i]!;
    if (c === ">" || (c === "/" && line[i + 1] === ">")) {
      const t = c === ">" ? ">" : "/>";
      out.push("tag", t);
      return i + t.length;
    }
    if (c === '"' || c === "'") {
      const end = stringEnd(line, i);
      out.push("str", line.slice(i, end));
      i = end;
      continue;
    }
    const m = /^[A-Za-z_:@][\w:.@-]*/.exec(line.slice(i));
    if (m) {
      out.push("attr", m[0]);
      i += m[0].length;
      continue;
    }
    out.push(null, c);
    i++;
  }
  return i;
}

function markdown(line: string): Token[] {
  if (/^\s{0,3}#{1,6}\s/.test(line)) return [{ kind: "kw", text: line }];
  if (/^\s{0,3}(```|~~~)/.test(line)) return [{ kind: "meta", text: line }];
  if (/^\s{0,3}>/.test(line)) return [{ kind: "com", text: line }];
  const out = new Emitter();
  const list = /^(\s*)([-*+]|\d+[.)])(\s)/.exec(line);
  let i = 0;
  if (list) {
    out.push(null, list[1]!);
    out.push("kw", list[2]!);
    out.push(null, list[3]!);
    i = list[0].length;
  }
  while (i < line.length) {
    const rest = line.slice(i);
    const code = /^`[^`]+`/.exec(rest);
    const link = code ? null : /^\[[^\]]*\]\([^)]*\)/.exec(rest);
    const strong = code || link ? null : /^(\*\*|__)[^*_]+\1/.exec(rest);
    const m = code ?? link ?? strong;
    if (m) {
      out.push(code ? "str" : link ? "attr" : "type", m[0]);
      i += m[0].length;
      continue;
    }
    out.push(null, line[i]!);
    i++;
  }
  return out.tokens;
}

class Emitter {
  readonly tokens: Token[] = [];

  push(kind: TokenKind | null, text: string): void {
    if (text === "") return;
    const last = this.tokens[this.tokens.length - 1];
    if (last && last.kind === kind) last.text += text;
    else this.tokens.push({ kind, text });
  }
}
