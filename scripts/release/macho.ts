// Reading a 64-bit Mach-O file: the header, the load commands the release looks at (segments and the code
// signature), and the blobs of an embedded signature. Used by the format check (binary-format.ts) and the
// ad-hoc signer (macho-sign.ts). The header and load commands are little-endian; signature blobs big-endian.

export const MH_MAGIC_64 = 0xfeedfacf;
export const MH_EXECUTE = 2;
export const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
export const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
export const CPU_TYPES = { x64: 0x01000007, arm64: 0x0100000c } as const;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;

export interface Segment {
  name: string;
  /** Offset of the load command in the file (to rewrite its sizes). */
  cmd: number;
  fileoff: bigint;
  filesize: bigint;
}

export interface MachO {
  view: DataView;
  cputype: number;
  filetype: number;
  segments: Map<string, Segment>;
  /** The code signature's load command offset, and the signature's place in the file. */
  signature: { cmd: number; off: number; size: number } | null;
}

export function parseMachO(bytes: Uint8Array): MachO {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 32 || view.getUint32(0, true) !== MH_MAGIC_64) throw new Error("not a 64-bit Mach-O file");
  const segments = new Map<string, Segment>();
  let signature: MachO["signature"] = null;
  let at = 32;
  for (let i = 0, n = view.getUint32(16, true); i < n; i++) {
    const cmd = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    if (size < 8 || at + size > bytes.length) throw new Error(`load command ${i} runs past the file`);
    if (cmd === LC_SEGMENT_64) {
      const name = new TextDecoder().decode(bytes.subarray(at + 8, at + 24)).replace(/\0+$/, "");
      segments.set(name, { name, cmd: at, fileoff: view.getBigUint64(at + 40, true), filesize: view.getBigUint64(at + 48, true) });
    } else if (cmd === LC_CODE_SIGNATURE) {
      signature = { cmd: at, off: view.getUint32(at + 8, true), size: view.getUint32(at + 12, true) };
    }
    at += size;
  }
  return { view, cputype: view.getUint32(4, true), filetype: view.getUint32(12, true), segments, signature };
}

/** The offsets of an embedded signature's blobs, by slot type (0: the CodeDirectory). */
export function signatureBlobs(m: MachO): Map<number, number> {
  if (!m.signature) throw new Error("no code signature (LC_CODE_SIGNATURE)");
  const { view } = m;
  const off = m.signature.off;
  if (off + m.signature.size > view.byteLength) throw new Error("the code signature runs past the file");
  if (view.getUint32(off) !== CSMAGIC_EMBEDDED_SIGNATURE) throw new Error("the code signature is not an embedded signature blob");
  const blobs = new Map<number, number>();
  for (let i = 0, n = view.getUint32(off + 8); i < n; i++) blobs.set(view.getUint32(off + 12 + i * 8), off + view.getUint32(off + 12 + i * 8 + 4));
  return blobs;
}
