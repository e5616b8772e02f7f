/**
 * The regex child process's program (see regex-sandbox.ts for the protocol).
 * childMain is sent to the child as source text, so it must stay
 * self-contained: no imports, no module-level references.
 */
import { BINARY_SNIFF_BYTES } from "../../core/binary";
import { readToEnd } from "./read-to-end";
import { regexScan, type AsciiFold } from "./regex-scan";

/** The child's entry point; stringified, so self-contained like regexScan. */
function childMain(scan: typeof regexScan, readWhole: typeof readToEnd, fs: typeof import("node:fs"), sniff: number): void {
  const cache = new Map<string, RegExp>();
  let program: {
    source: string;
    flags: string;
    perLine: boolean;
    literals: number[][] | null;
    required: number[][][];
    fold: AsciiFold | null;
  } | null = null;
  let literals: Uint8Array[] | null = null;
  let required: Uint8Array[][] = [];
  let buf = Buffer.allocUnsafe(1 << 20);
  let lo = 0;
  let hi = 0;
  const send = (reply: Buffer): void => {
    let off = 0;
    while (off < reply.length) off += fs.writeSync(1, reply, off, reply.length - off);
  };
  const status = (id: number, code: number): void => {
    const reply = Buffer.allocUnsafe(12);
    reply.writeUInt32LE(8, 0);
    reply.writeUInt32LE(id, 4);
    reply.writeUInt32LE(code, 8);
    send(reply);
  };
  const scanned = (id: number, region: Uint8Array, maxRecords: number, file: Buffer | null): void => {
    const p = program!;
    const r = scan({ source: p.source, flags: p.flags, perLine: p.perLine, literals, required, fold: p.fold, region, maxRecords }, cache);
    const n = r.starts.length;
    const body = file && r.count > 0 ? file : null;
    const reply = Buffer.allocUnsafe(24 + 8 * n + (body ? body.length : 0));
    reply.writeUInt32LE(20 + 8 * n + (body ? body.length : 0), 0);
    reply.writeUInt32LE(id, 4);
    reply.writeUInt32LE(0, 8);
    reply.writeUInt32LE(r.count, 12);
    reply.writeUInt32LE(n, 16);
    for (let k = 0; k < n; k++) {
      reply.writeUInt32LE(r.starts[k]!, 20 + 4 * k);
      reply.writeUInt32LE(r.ends[k]!, 20 + 4 * (n + k));
    }
    reply.writeUInt32LE(body ? body.length : 0, 20 + 8 * n);
    if (body) body.copy(reply, 24 + 8 * n);
    send(reply);
  };
  /** a scanned reply without matches: the file holds no required literal */
  const nothing = (id: number): void => {
    const reply = Buffer.alloc(24);
    reply.writeUInt32LE(20, 0);
    reply.writeUInt32LE(id, 4);
    send(reply);
  };
  const failed = (id: number, err: unknown): void => {
    const e = err as { message?: string; code?: string } | null;
    const code = Buffer.from(String(e?.code ?? ""), "utf8");
    const text = Buffer.from(String(e?.message ?? err), "utf8");
    const reply = Buffer.allocUnsafe(16 + code.length + text.length);
    reply.writeUInt32LE(12 + code.length + text.length, 0);
    reply.writeUInt32LE(id, 4);
    reply.writeUInt32LE(3, 8);
    reply.writeUInt32LE(code.length, 12);
    code.copy(reply, 16);
    text.copy(reply, 16 + code.length);
    send(reply);
  };
  /**
   * The whole file (or limit + 1 bytes of it); a symlink is refused, never
   * followed, and a FIFO, socket or device is never read (ENOTREG, as the
   * reader threads answer; O_NONBLOCK so that opening a FIFO returns at once).
   */
  const readFile = (path: string, limit: number): Buffer => {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;
    const fd = fs.openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: st.isDirectory() ? "EISDIR" : "ENOTREG" });
      const { buf: data, len } = readWhole(fs, fd, Buffer.allocUnsafe(Math.min(st.size, limit) + 1), limit);
      return data.subarray(0, len);
    } finally {
      fs.closeSync(fd);
    }
  };
  for (;;) {
    if (hi === buf.length) {
      if (lo > 0) {
        buf.copy(buf, 0, lo, hi);
        hi -= lo;
        lo = 0;
      } else {
        const grown = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(grown, 0, 0, hi);
        buf = grown;
      }
    }
    const got = fs.readSync(0, buf, hi, buf.length - hi, null);
    if (got === 0) return;
    hi += got;
    while (hi - lo >= 4) {
      const len = buf.readUInt32LE(lo);
      if (hi - lo - 4 < len) {
        if (len + 4 > buf.length) {
          const grown = Buffer.allocUnsafe(len + 4 + (1 << 20));
          buf.copy(grown, 0, lo, hi);
          hi -= lo;
          lo = 0;
          buf = grown;
        }
        break;
      }
      const at = lo + 4;
      lo = at + len;
      const type = buf.readUInt32LE(at);
      if (type === 1) {
        program = JSON.parse(buf.toString("utf8", at + 4, at + len));
        literals = program!.literals ? program!.literals.map((l) => new Uint8Array(l)) : null;
        required = program!.required.map((set) => set.map((l) => new Uint8Array(l)));
        continue;
      }
      const id = buf.readUInt32LE(at + 4);
      const maxRecords = buf.readUInt32LE(at + 8);
      try {
        if (type === 2) {
          scanned(id, buf.subarray(at + 12, at + len), maxRecords, null);
          continue;
        }
        const limit = buf.readUInt32LE(at + 12);
        const data = readFile(buf.toString("utf8", at + 16, at + len), limit);
        if (data.length > limit) status(id, 2);
        else if (data.subarray(0, sniff).indexOf(0) >= 0) status(id, 1);
        else if (literals && !literals.some((l) => data.indexOf(l) >= 0)) nothing(id);
        else if (!required.every((set) => set.some((l) => data.indexOf(l) >= 0))) nothing(id);
        else {
          const bom = data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
          scanned(id, data.subarray(bom), maxRecords, data);
        }
      } catch (err) {
        failed(id, err);
      }
    }
    if (lo === hi) lo = hi = 0;
  }
}

// `__name` covers bundlers that wrap functions to keep their names
export const CHILD_SOURCE = `var __name = (f) => f;\n(${childMain.toString()})(${regexScan.toString()}, ${readToEnd.toString()}, require("node:fs"), ${BINARY_SNIFF_BYTES});`;
