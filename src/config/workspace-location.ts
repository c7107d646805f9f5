/**
 * Checks a workspace path before anything is created there: Node's recursive mkdir
 * spins forever under /proc, and a file where a folder should be gives a cryptic ENOTDIR
 * much later. The error says which path, what is wrong and what to do.
 */
import { accessSync, constants, statSync } from "node:fs";
import { dirname } from "node:path";
import { ConfigError } from "./config-error.js";

const VIRTUAL_ROOTS = ["/proc", "/sys", "/dev"];

export function checkWorkspaceLocation(workspaceDir: string): void {
  const virtual = VIRTUAL_ROOTS.find((root) => workspaceDir === root || workspaceDir.startsWith(`${root}/`));
  if (virtual) {
    throw new ConfigError(
      `the workspace ${workspaceDir} is inside ${virtual}, a virtual file system where nothing can be stored`,
      {
        hint: "Choose a real folder, for example --workspace /srv/laoding",
      },
    );
  }
  // The nearest part of the path that exists must be a folder we may create things in.
  let existing = workspaceDir;
  for (;;) {
    try {
      const stats = statSync(existing);
      if (!stats.isDirectory()) {
        throw new ConfigError(`the workspace ${workspaceDir} cannot be created: ${existing} is a file, not a folder`, {
          hint: "Choose another --workspace",
        });
      }
      break;
    } catch (error) {
      if (error instanceof ConfigError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR")
        throw new ConfigError(
          `the workspace ${workspaceDir} cannot be used: ${existing}: ${code ?? (error as Error).message}`,
          { hint: "Choose another --workspace" },
        );
      existing = dirname(existing);
    }
  }
  try {
    accessSync(existing, existing === workspaceDir ? constants.R_OK | constants.X_OK : constants.W_OK | constants.X_OK);
  } catch {
    throw new ConfigError(
      `the workspace ${workspaceDir} cannot be ${existing === workspaceDir ? "read" : "created"}: no permission on ${existing}`,
      {
        hint: "Choose a folder you own, or fix its permissions",
      },
    );
  }
}
