// What can be checked of an executable that cannot run here: its format (ELF machine; Mach-O CPU type, file
// type and Bun's __BUN segment with the bundle in it) and, for Mach-O, the code signature: every page hash of the
// CodeDirectory is recomputed over the final bytes, as macOS does before it runs the file (an arm64 Mac kills an
// executable whose signature does not match).
import { readFileSync } from "node:fs";

const MH_MAGIC_64 = 0xfeedfacf;
const MH_EXECUTE = 2;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CPU = { x64: 0x01000007, arm64: 0x0100000c } as const;
const HASHES: Record<number, { name: string; size: number }> = { 1: { name: "sha1", size: 20 }, 2: { name: "sha256", size: 32 } };

export interface MachOReport {
  cpu: "x64" | "arm64";
  size: number;
  /** Bytes of Bun's __BUN segment (the bundled JavaScript and assets). */
  bunSegment: number;
  signature: { hash: string; pages: number; pageSize: number; adhoc: boolean };
}

/** Checks a Mach-O executable; throws with the first thing that is wrong. */
export function checkMachO(bytes: Uint8Array, wantCpu: "x64" | "arm64"): MachOReport {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 32 || view.getUint32(0, true) !== MH_MAGIC_64) throw new Error("not a 64-bit Mach-O file");
  const cputype = view.getUint32(4, true);
  if (cputype !== CPU[wantCpu]) throw new Error(`CPU type 0x${cputype.toString(16)}, not ${wantCpu}`);
  if (view.getUint32(12, true) !== MH_EXECUTE) throw new Error("not an executable (MH_EXECUTE)");
  const ncmds = view.getUint32(16, true);
  let at = 32;
  let bunSegment = 0;
  let sig: { off: number; size: number } | null = null;
  for (let i = 0; i < ncmds; i++) {
    const cmd = view.getUint32(at, true);
    const cmdsize = view.getUint32(at + 4, true);
    if (cmdsize < 8 || at + cmdsize > bytes.length) throw new Error(`load command ${i} runs past the file`);
    if (cmd === LC_SEGMENT_64) {
      const name = new TextDecoder().decode(bytes.subarray(at + 8, at + 24)).replace(/\0+$/, "");
      if (name === "__BUN") bunSegment = Number(view.getBigUint64(at + 48, true)); // filesize
    } else if (cmd === LC_CODE_SIGNATURE) {
      sig = { off: view.getUint32(at + 8, true), size: view.getUint32(at + 12, true) };
    }
    at += cmdsize;
  }
  if (bunSegment === 0) throw new Error("no __BUN segment: the bundle is not embedded");
  if (!sig) throw new Error("no code signature (LC_CODE_SIGNATURE)");
  return { cpu: wantCpu, size: bytes.length, bunSegment, signature: verifySignature(bytes, sig.off, sig.size) };
}

function verifySignature(bytes: Uint8Array, off: number, size: number): MachOReport["signature"] {
  if (off + size > bytes.length) throw new Error("the code signature runs past the file");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(off) !== CSMAGIC_EMBEDDED_SIGNATURE) throw new Error("the code signature is not an embedded signature blob");
  const count = view.getUint32(off + 8);
  for (let i = 0; i < count; i++) {
    const blob = off + view.getUint32(off + 12 + i * 8 + 4);
    if (view.getUint32(blob) !== CSMAGIC_CODEDIRECTORY) continue;
    const flags = view.getUint32(blob + 12);
    const hashOffset = view.getUint32(blob + 16);
    const nCodeSlots = view.getUint32(blob + 28);
    const codeLimit = view.getUint32(blob + 32);
    const hashSize = view.getUint8(blob + 36);
    const hashType = view.getUint8(blob + 37);
    const pageSize = 2 ** view.getUint8(blob + 39);
    const hash = HASHES[hashType];
    if (!hash || hash.size !== hashSize) throw new Error(`unknown code directory hash type ${hashType}`);
    if (codeLimit !== off) throw new Error(`the signature covers ${codeLimit} bytes, but the code runs to ${off}`);
    if (nCodeSlots !== Math.ceil(codeLimit / pageSize)) throw new Error(`${nCodeSlots} page hashes for ${codeLimit} bytes`);
    for (let p = 0; p < nCodeSlots; p++) {
      const page = bytes.subarray(p * pageSize, Math.min((p + 1) * pageSize, codeLimit));
      const got = new Bun.CryptoHasher(hash.name as "sha256").update(page).digest();
      const want = bytes.subarray(blob + hashOffset + p * hashSize, blob + hashOffset + (p + 1) * hashSize);
      if (!Buffer.from(got).equals(Buffer.from(want))) throw new Error(`page ${p} (bytes ${p * pageSize}..) does not match its signed hash`);
    }
    return { hash: hash.name, pages: nCodeSlots, pageSize, adhoc: (flags & 0x2) !== 0 };
  }
  throw new Error("the code signature has no code directory");
}

/** The identifier of a Mach-O file's CodeDirectory ("a.out" for what Bun signs). */
export function codeDirectoryIdentifier(bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 32;
  for (let i = 0, n = view.getUint32(16, true); i < n; i++) {
    if (view.getUint32(at, true) === LC_CODE_SIGNATURE) {
      const off = view.getUint32(at + 8, true);
      for (let k = 0, count = view.getUint32(off + 8); k < count; k++) {
        const blob = off + view.getUint32(off + 12 + k * 8 + 4);
        if (view.getUint32(blob) !== CSMAGIC_CODEDIRECTORY) continue;
        const start = blob + view.getUint32(blob + 20);
        return new TextDecoder().decode(bytes.subarray(start, bytes.indexOf(0, start)));
      }
    }
    at += view.getUint32(at + 4, true);
  }
  throw new Error("no code directory");
}

/** The ELF machine and class of an executable (62 x86-64, 183 AArch64). */
export function checkElf(bytes: Uint8Array, wantMachine: number): { machine: number; size: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 20 || view.getUint32(0) !== 0x7f454c46) throw new Error("not an ELF file");
  if (bytes[4] !== 2) throw new Error("not a 64-bit ELF file");
  const machine = view.getUint16(18, true);
  if (machine !== wantMachine) throw new Error(`ELF machine ${machine}, not ${wantMachine}`);
  if (view.getUint16(16, true) !== 2 && view.getUint16(16, true) !== 3) throw new Error("not an executable ELF file");
  return { machine, size: bytes.length };
}

export function readBinary(path: string): Uint8Array {
  return new Uint8Array(readFileSync(path));
}
