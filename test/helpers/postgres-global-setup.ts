/**
 * Vitest globalSetup: one throwaway PostgreSQL server for the whole test run, so store
 * tests run on both engines (test/helpers/test-store.ts makes one database per store).
 *
 * The cluster lives in a temp folder (`laoding-pg-*`): initdb with trust auth for the
 * superuser `laoding`, then `pg_ctl start` on a free loopback port with fsync off. The
 * server refuses to run as root, so as root both run as the `postgres` user. Teardown stops
 * it (immediate mode: the data is thrown away) and removes the folder; a folder left by a
 * run that was killed is cleaned up by the next run.
 *
 * Without PostgreSQL binaries the run goes on with SQLite only and one warning, unless CI
 * or LAODING_REQUIRE_POSTGRES=1 is set: then it fails, naming the Debian package.
 * LAODING_SKIP_POSTGRES=1 skips the server on purpose (SQLite only, no warning).
 */
import { execFileSync } from "node:child_process";
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The test server's superuser URL (database `postgres`), or "" when this run has no PostgreSQL. */
    laodingPostgresAdminUrl: string;
  }
}

/** Role whose members must give a password (every other role is trusted): the wrong-password tests. */
export const PASSWORD_ROLE_GROUP = "password_users";

const DIR_PREFIX = "laoding-pg-";
const SUPERUSER = "laoding";

export type Server = { dir: string; bin: string; port: number; asPostgres: boolean };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.LAODING_SKIP_POSTGRES === "1") {
    project.provide("laodingPostgresAdminUrl", "");
    return async () => undefined;
  }
  const bin = findPostgresBin();
  if (!bin) {
    const message =
      "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb, or LAODING_POSTGRES_BIN): install the Debian package `postgresql` (apt-get install postgresql)";
    if (process.env.CI || process.env.LAODING_REQUIRE_POSTGRES === "1")
      throw new Error(`${message}. CI and LAODING_REQUIRE_POSTGRES=1 require the PostgreSQL store tests`);
    console.warn(`[test] ${message}; store tests run on SQLite only this time`);
    project.provide("laodingPostgresAdminUrl", "");
    return async () => undefined;
  }

  removeAbandonedClusters();
  const started = Date.now();
  const server = await startServer(bin);
  const stopAtExit = () => stopServer(server);
  process.on("exit", stopAtExit);
  const adminUrl = `postgres://${SUPERUSER}@127.0.0.1:${server.port}/postgres`;
  try {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(`CREATE ROLE ${PASSWORD_ROLE_GROUP} NOLOGIN`);
    } finally {
      await client.end();
    }
  } catch (error) {
    stopServer(server);
    process.off("exit", stopAtExit);
    throw error;
  }
  if (process.env.LAODING_TEST_POSTGRES_VERBOSE === "1")
    console.warn(`[test] PostgreSQL up on 127.0.0.1:${server.port} in ${Date.now() - started} ms (${server.dir})`);
  project.provide("laodingPostgresAdminUrl", adminUrl);
  // Child processes (the CLI under test) can find it too.
  process.env.LAODING_TEST_POSTGRES_ADMIN_URL = adminUrl;
  return async () => {
    process.off("exit", stopAtExit);
    stopServer(server);
  };
}

/** The newest /usr/lib/postgresql/<version>/bin holding initdb, pg_ctl and postgres (the bench starts its server with it too). */
export function findPostgresBin(): string | undefined {
  const override = process.env.LAODING_POSTGRES_BIN;
  if (override) return existsSync(join(override, "initdb")) ? override : undefined;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter(
      (name) =>
        /^\d+(\.\d+)?$/.test(name) &&
        existsSync(join(root, name, "bin", "initdb")) &&
        existsSync(join(root, name, "bin", "pg_ctl")),
    )
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** Runs a server program, as the `postgres` user when this process is root (the server refuses root). */
export function runPg(server: Pick<Server, "bin" | "asPostgres">, program: string, args: string[]): string {
  const file = join(server.bin, program);
  const [command, argv] = server.asPostgres ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
  return execFileSync(command, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

function commandError(error: unknown): string {
  const err = error as { stderr?: string; stdout?: string; message?: string };
  return (
    [err.stderr, err.stdout]
      .filter((text) => text && text.trim().length > 0)
      .join("\n")
      .trim() ||
    (err.message ?? String(error))
  );
}

async function startServer(bin: string): Promise<Server> {
  const asPostgres = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, "owner.pid"), `${process.pid}\n`);
  if (asPostgres) {
    let ids: string[];
    try {
      ids =
        execFileSync("id", ["postgres"], { encoding: "utf8" })
          .match(/uid=(\d+).*gid=(\d+)/)
          ?.slice(1) ?? [];
    } catch {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(
        "running as root, the test PostgreSQL server needs the `postgres` user (created by the Debian package `postgresql`)",
      );
    }
    chownSync(dir, Number(ids[0]), Number(ids[1]));
  }
  const server: Server = { dir, bin, port: 0, asPostgres };
  const data = join(dir, "data");
  try {
    runPg(server, "initdb", ["-D", data, "-A", "trust", "-U", SUPERUSER, "--locale=C", "-E", "UTF8", "--no-sync"]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed for the test PostgreSQL server: ${commandError(error)}`);
  }
  // Trust everyone on loopback except members of PASSWORD_ROLE_GROUP, who must give a password.
  writeFileSync(
    join(data, "pg_hba.conf"),
    [
      "local all all trust",
      `host all +${PASSWORD_ROLE_GROUP} 127.0.0.1/32 scram-sha-256`,
      "host all all 127.0.0.1/32 trust",
      "host all all ::1/128 trust",
      "",
    ].join("\n"),
  );
  const options = [
    "-k",
    dir,
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=300",
    "-c shared_buffers=32MB",
  ];
  let lastError = "";
  for (let attempt = 0; attempt < 5; attempt += 1) {
    server.port = await freePort();
    try {
      runPg(server, "pg_ctl", [
        "-D",
        data,
        "-l",
        join(dir, "server.log"),
        "-o",
        `-p ${server.port} ${options.join(" ")}`,
        "-w",
        "-t",
        "30",
        "start",
      ]);
      return server;
    } catch (error) {
      lastError = `${commandError(error)}\n${readLogTail(dir)}`;
      // Another run took the port between the probe and the start: try another one.
      if (!/address already in use|could not bind|could not create any TCP\/IP sockets/i.test(lastError)) break;
    }
  }
  stopServer(server);
  throw new Error(`the test PostgreSQL server did not start: ${lastError}`);
}

function readLogTail(dir: string): string {
  try {
    return readFileSync(join(dir, "server.log"), "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "";
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Stops the server (immediate: nothing in it is kept) and removes its folder. Synchronous, so it also works at process exit. */
function stopServer(server: Pick<Server, "dir" | "bin" | "asPostgres">): void {
  if (!existsSync(server.dir)) return;
  if (existsSync(join(server.dir, "data", "postmaster.pid"))) {
    try {
      runPg(server, "pg_ctl", ["-D", join(server.dir, "data"), "-m", "immediate", "-w", "-t", "30", "stop"]);
    } catch {
      // Already stopped (or never started): the folder goes anyway.
    }
  }
  rmSync(server.dir, { recursive: true, force: true });
}

/** Clusters whose test run died without its teardown (killed): their owner process is gone. */
function removeAbandonedClusters(): void {
  const bin = findPostgresBin();
  if (!bin) return;
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    try {
      const owner = Number(readFileSync(join(dir, "owner.pid"), "utf8").trim());
      if (Number.isInteger(owner) && owner > 0 && processAlive(owner)) continue;
      // A folder younger than a minute without owner.pid may be a run starting right now.
      if (!Number.isInteger(owner) && Date.now() - statSync(dir).mtimeMs < 60_000) continue;
    } catch {
      try {
        if (Date.now() - statSync(dir).mtimeMs < 60_000) continue;
      } catch {
        continue;
      }
    }
    stopServer({ dir, bin, asPostgres: process.getuid?.() === 0 });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
