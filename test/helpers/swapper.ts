/**
 * The agent's own shell swapping folders for links in a loop (`renameat2(RENAME_EXCHANGE)`
 * of d1<->l1 and d2<->l2 in its working folder), for the race tests: run as
 * `python3 swapper.py SECONDS`; prints how many swaps it made.
 */
export const SWAPPER = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
pairs = [(b"d1", b"l1"), (b"d2", b"l2")]
end = time.time() + float(sys.argv[1])
swaps = 0
while time.time() < end:
    for a, b in pairs:
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0:
            swaps += 1
print("swaps", swaps)
`;
