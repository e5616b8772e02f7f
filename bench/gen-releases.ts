// The "releases" layout of bench/gen-repo.ts: many release trees of one project side by side, the way vendored
// versions, release archives or per-version documentation sit in one repository.
//
//   node_modules/.bin/bun bench/gen-repo.ts --out DIR --layout releases [--files 90000] [--releases 20]
//
// The first release is an ordinary generated project (planRepo). Each later release starts from the one before it:
// a few files are deleted, some are edited (an edit inserts a few lines and sometimes drops one, so most of a file
// stays as it was) and a few are added. Which files are edited is weighted by size: large files change more often,
// as generated and data files do. A file nobody edited is the same blob in every release that holds it, so the
// repository has many paths per distinct blob: with the defaults about 90k files and 900 MB, of which about 17k
// distinct blobs and 420 MB. Everything is drawn from the seed, so the tree and the commit are deterministic.

import { BINARY_EXTS, type FileSpec, type Plan, Rng, fillerLine, makeLexicon, planRepo, renderFile, useLexicon } from "./gen-repo.ts";

/** Shares of a release's files deleted, edited and added on the way to the next release. */
const DELETE_SHARE = 0.006;
const EDIT_SHARE = 0.135;
const ADD_SHARE = 0.014;
/** Sizes of the first release's files against planRepo's, so the whole lands near 10 KB a file. */
const SIZE_SCALE = 0.78;
/** An edit picks a file with probability growing as size^EDIT_SIZE_POWER. */
const EDIT_SIZE_POWER = 1.75;

/** Made-up words the project's text draws on besides the base words, as a real project's identifiers do. */
const LEXICON_WORDS = 12000;

/** One file through the releases: its first spec (path inside a release) and how many edits it has had. */
interface Lineage {
  id: number;
  spec: FileSpec;
  edits: number;
  /** Planned size after the edits so far (edits add a few lines), for the size weighting. */
  size: number;
}

export function releaseName(k: number): string {
  return `v1.${k}`;
}

/** Plans `releases` release trees under `releases/`, about `files` tracked files in all. */
export function planReleases(files: number, releases: number, seed: number): Plan {
  const growth = 1 + ADD_SHARE - DELETE_SHARE;
  const first = Math.max(50, Math.round((files * (growth - 1)) / (growth ** releases - 1)));
  const base = planRepo(first, seed);
  for (const f of base.files) if (f.literal === undefined) f.size = Math.max(f.size === 0 ? 0 : 1, Math.round(f.size * SIZE_SCALE));
  const r = new Rng(seed ^ 0x7e1ea5e5);
  const lineages: Lineage[] = base.files.map((spec, id) => ({ id, spec, edits: 0, size: spec.size }));
  const linked = new Set(base.symlinks.map((s) => s.target));
  let live = lineages.slice();
  const out: FileSpec[] = [];
  const symlinks: Plan["symlinks"] = [];
  const dirs = new Set<string>(["releases"]);
  for (let k = 0; k < releases; k++) {
    if (k > 0) live = nextRelease(r, live, lineages, linked, k);
    const prefix = `releases/${releaseName(k)}/`;
    for (const d of base.dirs) dirs.add(prefix + d);
    for (const l of live) out.push({ ...l.spec, path: prefix + l.spec.path, blobKey: `${l.id}:${l.edits}` });
    const paths = new Set(live.map((l) => l.spec.path));
    for (const s of base.symlinks) {
      if (paths.has(s.target) || base.dirs.includes(s.target)) symlinks.push({ path: prefix + s.path, target: prefix + s.target });
    }
  }
  const latest = `releases/${releaseName(releases - 1)}/`;
  const ignored = base.ignored.map((f) => ({ ...f, path: latest + f.path }));
  const lexicon = makeLexicon(seed ^ 0x1e71c0, LEXICON_WORDS);
  const render = versionRenderer(lineages);
  const withLexicon = (f: FileSpec) => {
    useLexicon(lexicon);
    try {
      return render(f);
    } finally {
      useLexicon(null);
    }
  };
  return { files: out, ignored, symlinks, dirs: [...dirs], render: withLexicon };
}

/** The release after `live`: some files deleted, some edited, some added (new lineages appended to `all`). */
function nextRelease(r: Rng, live: Lineage[], all: Lineage[], linked: Set<string>, k: number): Lineage[] {
  const n = live.length;
  const removable = live.filter((l) => l.spec.literal === undefined && !linked.has(l.spec.path));
  const gone = new Set<Lineage>();
  for (let i = Math.round(n * DELETE_SHARE); i > 0 && removable.length > 0; i--) gone.add(removable[r.int(removable.length)]!);
  const kept = live.filter((l) => !gone.has(l));
  // Efraimidis-Spirakis: a weighted sample without replacement, keyed u^(1/w)
  const editable = kept.filter((l) => l.spec.literal === undefined);
  const keyed = editable.map((l) => ({ l, key: Math.log(1 - r.float()) / Math.max(1, l.size) ** EDIT_SIZE_POWER }));
  keyed.sort((a, b) => b.key - a.key);
  const edited = new Map<Lineage, Lineage>();
  for (const { l } of keyed.slice(0, Math.round(n * EDIT_SHARE))) {
    const next: Lineage = { ...l, edits: l.edits + 1, size: l.size + 40 * r.range(2, 12) };
    edited.set(l, next);
    all[l.id] = next;
  }
  const result = kept.map((l) => edited.get(l) ?? l);
  const taken = new Set(result.map((l) => l.spec.path));
  for (let i = 0; i < Math.round(n * ADD_SHARE); i++) {
    const template = result[r.int(result.length)]!.spec;
    if (template.literal !== undefined) continue;
    const slash = template.path.lastIndexOf("/");
    const dot = template.path.lastIndexOf(".");
    const stem = template.path.slice(0, dot > slash ? dot : template.path.length);
    const path = `${stem}-r${k}-${i}${dot > slash ? template.path.slice(dot) : ""}`;
    if (taken.has(path)) continue;
    taken.add(path);
    const size = Math.max(1, Math.round(Math.abs(template.size) * r.logUniform(0.3, 3)));
    const spec: FileSpec = { ...template, path, size, seed: r.u32(), noEol: false };
    const l: Lineage = { id: all.length, spec, edits: 0, size };
    all.push(l);
    result.push(l);
  }
  return result;
}

/**
 * Renders a release file's bytes: its lineage's first version, then its edits. Files arrive release by release,
 * so each lineage's latest version is kept and the next edit applied to it; memory stays about one release.
 */
function versionRenderer(lineages: Lineage[]): (f: FileSpec) => Uint8Array {
  const latest = new Map<number, { edits: number; bytes: Uint8Array }>();
  return (f) => {
    const [idText, editsText] = (f.blobKey as string).split(":");
    const id = Number(idText);
    const edits = Number(editsText);
    let have = latest.get(id);
    if (!have || have.edits > edits) {
      const rendered = renderFile(lineages[id]!.spec);
      have = { edits: 0, bytes: typeof rendered === "string" ? Buffer.from(rendered) : rendered };
    }
    const spec = lineages[id]!.spec;
    while (have.edits < edits) have = { edits: have.edits + 1, bytes: applyEdit(have.bytes, spec, have.edits + 1) };
    latest.set(id, have);
    return have.bytes;
  };
}

/** Edit number `n` of a file: a few lines inserted at one to three places, sometimes a line dropped. */
export function applyEdit(bytes: Uint8Array, spec: FileSpec, n: number): Uint8Array {
  const r = new Rng((spec.seed ^ Math.imul(n, 0x9e3779b1)) >>> 0);
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (BINARY_EXTS.has(spec.ext)) {
    // past git's 8000-byte sniff, so the file stays binary
    const patch = Buffer.alloc(r.range(256, 4096));
    for (let i = 0; i < patch.length; i++) patch[i] = r.chance(0.05) ? 0 : r.u32() & 0xff;
    if (buf.length < 16 * 1024) return Buffer.concat([buf, patch]);
    const at = r.range(8192, buf.length - patch.length);
    return Buffer.concat([buf.subarray(0, at), patch, buf.subarray(at + patch.length)]);
  }
  const eol = spec.crlf ? "\r\n" : "\n";
  const cuts = Array.from({ length: r.range(1, 3) }, () => {
    const nl = buf.indexOf(10, r.int(Math.max(1, buf.length)));
    return nl < 0 ? 0 : nl + 1;
  }).sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const at of cuts) {
    if (at < from) continue;
    parts.push(buf.subarray(from, at));
    const lines = Array.from({ length: r.range(1, 12) }, () => fillerLine(r, spec.ext) + eol).join("");
    parts.push(Buffer.from(lines));
    from = at;
    if (r.chance(0.3)) {
      // the line after the insertion is dropped (not the last one, so a file without a final newline keeps it so)
      const nl = buf.indexOf(10, at);
      if (nl >= 0 && nl + 1 < buf.length) from = nl + 1;
    }
  }
  parts.push(buf.subarray(from));
  return Buffer.concat(parts);
}
