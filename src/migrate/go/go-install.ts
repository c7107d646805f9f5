/**
 * Where the parts of a Go LaodingBot install are. The Go bot ran from its repository with
 * `configs/env` there and its workspace in `workspace/` (skills/, data/*.db and its work
 * folder `workspace/workspace`); `--from` may also name that workspace folder itself.
 */
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

export type GoInstall = {
  dir: string;
  /** The Go bot's workspace folder (DIR/workspace, or DIR itself). */
  root: string;
  envFile?: string;
  skillsDir?: string;
  databaseFile?: string;
  /** The Go bot's working folder (`<root>/workspace`), copied into the agent's working tree. */
  filesDir?: string;
};

export class GoInstallError extends Error {
  override readonly name = "GoInstallError";
}

const DATABASE_EXTENSIONS = [".db", ".sqlite", ".sqlite3"];

export function locateGoInstall(dir: string, databaseFile?: string): GoInstall {
  if (!isFolder(dir))
    throw new GoInstallError(
      `--from ${dir} is not a folder: give the Go LaodingBot's folder (the one holding configs/env and workspace/)`,
    );
  const nested = join(dir, "workspace");
  const root = isFolder(join(nested, "skills")) || isFolder(join(nested, "data")) ? nested : dir;
  const install: GoInstall = { dir, root };
  const envFile = [
    join(dir, "configs", "env"),
    join(dir, ".env"),
    join(root, "configs", "env"),
    join(root, ".env"),
  ].find(isFile);
  if (envFile) install.envFile = envFile;
  if (isFolder(join(root, "skills"))) install.skillsDir = join(root, "skills");
  const database = databaseFile ?? findDatabase(join(root, "data")) ?? findDatabase(join(dir, "data"));
  if (database) {
    if (!isFile(database)) throw new GoInstallError(`--database ${database} is not a file`);
    install.databaseFile = database;
  }
  if (isFolder(join(root, "workspace"))) install.filesDir = join(root, "workspace");
  if (!install.envFile && !install.skillsDir && !install.databaseFile && !install.filesDir) {
    throw new GoInstallError(
      `${dir} holds nothing of a Go LaodingBot: no configs/env, no skills/, no data/*.db and no workspace/ (in it or in ${nested})`,
    );
  }
  return install;
}

/** The one SQLite file in data/ (laoding.db first); several others are ambiguous. */
function findDatabase(dataDir: string): string | undefined {
  if (!isFolder(dataDir)) return undefined;
  const files = readdirSync(dataDir).filter(
    (name) => DATABASE_EXTENSIONS.some((extension) => name.endsWith(extension)) && isFile(join(dataDir, name)),
  );
  if (files.includes("laoding.db")) return join(dataDir, "laoding.db");
  if (files.length > 1)
    throw new GoInstallError(
      `${dataDir} holds several databases (${files.join(", ")}): name the Go bot's with --database FILE`,
    );
  return files[0] === undefined ? undefined : join(dataDir, files[0]);
}

function isFolder(path: string): boolean {
  return existsSync(path) && lstatSync(path).isDirectory();
}

function isFile(path: string): boolean {
  return existsSync(path) && lstatSync(path).isFile();
}
