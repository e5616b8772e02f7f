import { statSync } from "node:fs";

/** The index file's identity: git replaces the index by renaming a new file over it, so this names its content. */
export function indexIdentity(indexPath: string): string | null {
  try {
    const st = statSync(indexPath, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}
