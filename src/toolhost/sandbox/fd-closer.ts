/**
 * Closes every file descriptor above 2 before the next program starts. Node marks its
 * own descriptors close-on-exec, but one the bot inherited from whoever started it
 * (`exec 200>>file` in a start script, a supervisor's socket) is not, and bwrap, setpriv
 * and prlimit pass it on: without this, a sandboxed command could write to it.
 * bash is the one tool every sandbox layer already has; `/proc/self/fd`, read by bash itself, lists its
 * own descriptors (the glob's directory descriptor is gone by the time the loop runs). No redirection on the
 * loop: bash would park the real stderr on a high descriptor, which the loop then closes.
 */
const CLOSE_SCRIPT = 'for p in /proc/self/fd/*; do f=${p##*/}; [ "$f" -gt 2 ] && eval "exec $f>&-"; done; exec "$@"';

/** Prefixes a command with the closer: the result runs `argv` with only fds 0-2 open. */
export function withInheritedFdsClosed(argv: readonly string[]): string[] {
  return ["/bin/bash", "--noprofile", "--norc", "-c", CLOSE_SCRIPT, "laoding-fd-closer", ...argv];
}
