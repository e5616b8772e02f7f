// Ad-hoc code signing of a Mach-O executable, written here because Bun 1.4.5 leaves darwin-x64 executables
// with the runtime's original Developer ID signature: it no longer matches the bytes once the bundle is in
// (its CodeDirectory stops at the runtime's old end), and macOS refuses such a file. The signature is the one
// Bun itself writes for darwin-arm64 (and Apple's linker by default): one CodeDirectory, SHA-256 over 4 KiB
// pages up to the signature, flagged ad hoc and linker-signed, the __TEXT segment as the executable segment.
// Bytes before the signature are left as they are, but for the two sizes in the load commands; the file ends
// where the new signature does.
import { CSMAGIC_CODEDIRECTORY, CSMAGIC_EMBEDDED_SIGNATURE, parseMachO } from "./macho.ts";

const PAGE = 4096;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_EXECSEG_MAIN_BINARY = 1n;

/** The executable with an ad-hoc signature over everything before its signature's offset. */
export function signAdHoc(input: Uint8Array, identifier: string): Uint8Array {
  const m = parseMachO(input);
  const text = m.segments.get("__TEXT");
  const linkedit = m.segments.get("__LINKEDIT");
  if (!m.signature || !text || !linkedit) throw new Error("the executable has no LC_CODE_SIGNATURE, __TEXT or __LINKEDIT to sign");
  if (m.signature.off % 16 !== 0 || BigInt(m.signature.off) < linkedit.fileoff) throw new Error("the signature is not at the end of __LINKEDIT");
  const codeLimit = m.signature.off;
  const slots = Math.ceil(codeLimit / PAGE);
  const ident = new TextEncoder().encode(`${identifier}\0`);
  const headerSize = 88; // CodeDirectory version 0x20400: up to execSegFlags
  const hashOffset = headerSize + ident.length;
  const cdLength = hashOffset + slots * 32;
  const superLength = 12 + 8 + cdLength;
  const out = new Uint8Array(codeLimit + superLength);
  out.set(input.subarray(0, codeLimit));
  const view = new DataView(out.buffer);
  // load commands (little-endian, in page 0, so before hashing): the signature's new size, and __LINKEDIT
  // ending where it does
  view.setUint32(m.signature.cmd + 12, superLength, true);
  view.setBigUint64(linkedit.cmd + 48, BigInt(out.length) - linkedit.fileoff, true);
  // SuperBlob (big-endian): magic, length, count, then {type, offset} per blob
  const s = codeLimit;
  view.setUint32(s, CSMAGIC_EMBEDDED_SIGNATURE);
  view.setUint32(s + 4, superLength);
  view.setUint32(s + 8, 1);
  view.setUint32(s + 12, 0); // CSSLOT_CODEDIRECTORY
  view.setUint32(s + 16, 20);
  const cd = s + 20;
  view.setUint32(cd, CSMAGIC_CODEDIRECTORY);
  view.setUint32(cd + 4, cdLength);
  view.setUint32(cd + 8, 0x20400);
  view.setUint32(cd + 12, CS_ADHOC | CS_LINKER_SIGNED);
  view.setUint32(cd + 16, hashOffset);
  view.setUint32(cd + 20, headerSize);
  view.setUint32(cd + 24, 0); // special slots
  view.setUint32(cd + 28, slots);
  view.setUint32(cd + 32, codeLimit);
  out[cd + 36] = 32; // hash size
  out[cd + 37] = 2; // SHA-256
  out[cd + 38] = 0; // platform
  out[cd + 39] = 12; // log2(page size)
  // spare2, scatterOffset, teamOffset, spare3, codeLimit64 stay zero
  view.setBigUint64(cd + 64, text.fileoff);
  view.setBigUint64(cd + 72, text.filesize);
  view.setBigUint64(cd + 80, CS_EXECSEG_MAIN_BINARY);
  out.set(ident, cd + headerSize);
  for (let p = 0; p < slots; p++) {
    const page = out.subarray(p * PAGE, Math.min((p + 1) * PAGE, codeLimit));
    out.set(new Bun.CryptoHasher("sha256").update(page).digest(), cd + hashOffset + p * 32);
  }
  return out;
}
