/**
 * Byte-order (UTF-8) comparison of strings without encoding them.
 *
 * UTF-8 byte order equals Unicode code point order. JavaScript's default
 * comparison is UTF-16 code unit order, which differs only when one side is a
 * surrogate (U+D800..U+DFFF, i.e. a character outside the BMP) and the other is
 * in U+E000..U+FFFF. Remapping code units fixes exactly that case.
 */
import { perPath } from "./per-path";

export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca === cb) continue;
    if (ca >= 0xd800 && cb >= 0xd800) return remap(ca) - remap(cb);
    return ca - cb;
  }
  return a.length - b.length;
}
perPath(compareUtf8);


function remap(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

export function sortUtf8(values: string[]): string[] {
  return values.sort(compareUtf8);
}

export function sortByUtf8<T>(values: T[], key: (v: T) => string): T[] {
  return values.sort((x, y) => compareUtf8(key(x), key(y)));
}

/**
 * The first index at or after `from` of a list sorted by compareUtf8 of its
 * keys whose key is not below `key` (the list's length when none is).
 */
export function searchUtf8<T>(sorted: readonly T[], key: string, keyOf: (item: T) => string, from = 0): number {
  let lo = from;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareUtf8(keyOf(sorted[mid] as T), key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
