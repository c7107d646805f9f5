/**
 * The file side of an agent's egress socket. The folder is 0711 (agents traverse it to
 * their own socket without listing the others); each socket is 0600 and, when the bot is
 * root, owned by the agent's uid, so only that agent (and root) can connect. A socket file
 * left by a bot that died is replaced; a live one, or a path that is not a socket, is an
 * error and never deleted.
 */
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { chmod, chown, lstat, unlink } from "node:fs/promises";
import type { Server } from "node:http";
import { connect } from "node:net";

/** sun_path holds 108 bytes with its terminating NUL on Linux. */
export const MAX_SOCKET_PATH_BYTES = 107;

export type SocketOwner = { readonly uid: number; readonly gid: number };

export function ensureSocketDir(socketDir: string): void {
  try {
    if (!statSync(socketDir).isDirectory())
      throw new Error(`the egress socket folder ${socketDir} exists and is not a folder; remove it or choose another`);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(socketDir, { recursive: true, mode: 0o711 });
  // mkdir's mode passes through the umask; the folder must be exactly 0711.
  chmodSync(socketDir, 0o711);
}

/**
 * Binds `server` at `path` (replacing a stale socket), then sets the file's mode and
 * owner. `onBound` marks the moment the file became ours, for cleanup after a later failure.
 */
export async function bindAgentSocket(
  server: Server,
  path: string,
  owner: SocketOwner | undefined,
  onBound: () => void,
): Promise<void> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    throw new Error(
      `the egress socket path ${path} is over ${MAX_SOCKET_PATH_BYTES} bytes, the limit of a Unix socket path; choose a shorter socket folder`,
    );
  await removeStaleSocket(path);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.removeListener("error", reject);
      onBound();
      resolve();
    });
  });
  // Until chmod the socket has the umask's mode; connecting needs write permission,
  // which the usual umask (022) does not give other users, so the window admits no one.
  await chmod(path, 0o600);
  if (owner) await chown(path, owner.uid, owner.gid);
}

async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = (await lstat(path)).isSocket();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket; remove it or choose another socket folder`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (live) throw new Error(`${path} is served by another process (is another bot running on this workspace?)`);
  await unlink(path);
}
