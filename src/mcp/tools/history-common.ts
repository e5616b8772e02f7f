import { FsHistoryStore } from "../../ops/history/fs-history-store";
import type { Workspace } from "../../ops/workspace";

const stores = new WeakMap<Workspace, FsHistoryStore>();

/** The workspace's edit history, one store per workspace (its caches of logs and packs live with it). */
export function historyStore(ws: Workspace): FsHistoryStore {
  let store = stores.get(ws);
  if (!store) {
    store = new FsHistoryStore(ws.repo.stateDir);
    stores.set(ws, store);
  }
  return store;
}
