/**
 * Watches skills folders and calls `onChange` once per burst of changes (debounced):
 * an editor saving a file, a draft being written or `laoding skills reload` touching
 * its marker all end in one reload. Folders that do not exist are created first so they
 * can be watched.
 */
import { mkdirSync, watch, type FSWatcher } from "node:fs";

export const DEFAULT_SKILL_RELOAD_DEBOUNCE_MS = 300;
/** Touched by `laoding skills reload` to make a running bot reload. */
export const RELOAD_MARKER = ".reload-request";

export type SkillWatcher = { close(): void };

export function watchSkillFolders(
  dirs: string[],
  onChange: () => void,
  options: { debounceMs?: number; onError?: (error: Error) => void } = {},
): SkillWatcher {
  const debounceMs = options.debounceMs ?? DEFAULT_SKILL_RELOAD_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | undefined;
  const trigger = () => {
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
  };
  const watchers: FSWatcher[] = [];
  for (const dir of new Set(dirs)) {
    try {
      mkdirSync(dir, { recursive: true });
      const watcher = watch(dir, { recursive: true }, (_event, file) => {
        // Our own temp files come and go inside one atomic write: not a change.
        if (file && /\.tmp-[0-9a-f]+$/.test(file)) return;
        trigger();
      });
      watcher.on("error", (error) => options.onError?.(error));
      watchers.push(watcher);
    } catch (error) {
      options.onError?.(error as Error);
    }
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
