/**
 * A script, module or config file an interpreter reads is the agent's own file, which its
 * history shows; `-`, `/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/0` are its input, so
 * `echo CODE | python3 /dev/stdin` is inline code by another road. Everything under
 * /dev and /proc is refused, also reached through `..` from the session folder.
 */
import { posix } from "node:path";

export function namesInput(path: string): boolean {
  if (path === "-") return true;
  // `../../dev/stdin` from the session folder: the `..` are not known to stop short of /.
  const normal = posix.normalize(path).replace(/^(\.\.\/)+/, "/");
  return /^\/(dev|proc)(\/|$)/.test(normal);
}

export function inputProblem(program: string, what: string, path: string): string | undefined {
  if (path === "-")
    return `${program}: without a script file it runs code piped to it (- is its input); write a script with file.write and run that`;
  return namesInput(path)
    ? `${program} would read ${what} from ${path}, which is its input or a device, not a file; write it with file.write and name that file`
    : undefined;
}
