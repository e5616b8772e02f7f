import { statSync } from "node:fs";

/**
 * A file's identity (device, inode, size, times): for the index, which git replaces by renaming a new file over
 * it, this names its content; for any file, it changes whenever the file is written, made or removed.
 */
export function indexIdentity(indexPath: string): string | null {
  try {
    const st = statSync(indexPath, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}
