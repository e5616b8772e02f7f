// What can be checked of an executable that cannot run here: its format (ELF machine; Mach-O CPU type, file
// type and Bun's __BUN segment with the bundle in it) and, for Mach-O, the code signature: every page hash of the
// CodeDirectory is recomputed over the final bytes, as macOS does before it runs the file (an arm64 Mac kills an
// executable whose signature does not match).
import { readFileSync } from "node:fs";
import { CPU_TYPES, CSMAGIC_CODEDIRECTORY, MH_EXECUTE, parseMachO, signatureBlobs, type MachO } from "./macho.ts";

const HASHES: Record<number, { name: "sha1" | "sha256"; size: number }> = { 1: { name: "sha1", size: 20 }, 2: { name: "sha256", size: 32 } };

export interface MachOReport {
  cpu: "x64" | "arm64";
  size: number;
  /** Bytes of Bun's __BUN segment (the bundled JavaScript and assets). */
  bunSegment: number;
  signature: { hash: string; pages: number; pageSize: number; adhoc: boolean };
}

/** Checks a Mach-O executable; throws with the first thing that is wrong. */
export function checkMachO(bytes: Uint8Array, wantCpu: "x64" | "arm64"): MachOReport {
  const m = parseMachO(bytes);
  if (m.cputype !== CPU_TYPES[wantCpu]) throw new Error(`CPU type 0x${m.cputype.toString(16)}, not ${wantCpu}`);
  if (m.filetype !== MH_EXECUTE) throw new Error("not an executable (MH_EXECUTE)");
  const bunSegment = Number(m.segments.get("__BUN")?.filesize ?? 0n);
  if (bunSegment === 0) throw new Error("no __BUN segment: the bundle is not embedded");
  return { cpu: wantCpu, size: bytes.length, bunSegment, signature: verifySignature(bytes, m) };
}

/** The CodeDirectory's page hashes, each recomputed over the file's bytes. */
function verifySignature(bytes: Uint8Array, m: MachO): MachOReport["signature"] {
  const { view } = m;
  const cd = signatureBlobs(m).get(0);
  if (cd === undefined || view.getUint32(cd) !== CSMAGIC_CODEDIRECTORY) throw new Error("the code signature has no code directory");
  const flags = view.getUint32(cd + 12);
  const hashOffset = view.getUint32(cd + 16);
  const nCodeSlots = view.getUint32(cd + 28);
  const codeLimit = view.getUint32(cd + 32);
  const hashSize = view.getUint8(cd + 36);
  const hash = HASHES[view.getUint8(cd + 37)];
  const pageSize = 2 ** view.getUint8(cd + 39);
  if (!hash || hash.size !== hashSize) throw new Error(`unknown code directory hash type ${view.getUint8(cd + 37)}`);
  const codeEnd = m.signature!.off;
  if (codeLimit !== codeEnd) throw new Error(`the signature covers ${codeLimit} bytes, but the code runs to ${codeEnd}`);
  if (nCodeSlots !== Math.ceil(codeLimit / pageSize)) throw new Error(`${nCodeSlots} page hashes for ${codeLimit} bytes`);
  for (let p = 0; p < nCodeSlots; p++) {
    const page = bytes.subarray(p * pageSize, Math.min((p + 1) * pageSize, codeLimit));
    const got = Buffer.from(new Bun.CryptoHasher(hash.name).update(page).digest());
    const want = bytes.subarray(cd + hashOffset + p * hashSize, cd + hashOffset + (p + 1) * hashSize);
    if (!got.equals(Buffer.from(want))) throw new Error(`page ${p} (bytes ${p * pageSize}..) does not match its signed hash`);
  }
  return { hash: hash.name, pages: nCodeSlots, pageSize, adhoc: (flags & 0x2) !== 0 };
}

/** The identifier of a Mach-O file's CodeDirectory ("a.out" for what Bun signs). */
export function codeDirectoryIdentifier(bytes: Uint8Array): string {
  const m = parseMachO(bytes);
  const cd = signatureBlobs(m).get(0);
  if (cd === undefined) throw new Error("no code directory");
  const start = cd + m.view.getUint32(cd + 20);
  return new TextDecoder().decode(bytes.subarray(start, bytes.indexOf(0, start)));
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
