/**
 * Host names as the egress proxy compares them: lower case, without the trailing dot of
 * a fully qualified name, ASCII only (an internationalized name is written in its
 * punycode `xn--` form, which is what reaches DNS), each label letters, digits, `-` and
 * `_` (some internal names carry underscores), no label starting or ending with `-`.
 * A name whose last label is numeric is refused: resolvers read it as an IPv4 number
 * (ip-address.ts explains why such spellings are refused rather than guessed).
 */
import { looksLikeLooseIpv4 } from "./ip-address.js";

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const NAME_MAX = 253;

export class HostNameError extends Error {
  override readonly name = "HostNameError";
}

/** The comparable form of a host name, or throws HostNameError saying what is wrong. */
export function normalizeHostName(text: string): string {
  if (text === "") throw new HostNameError("the name is empty");
  // Only printable ASCII: anything else is either an IDN (write its xn-- form) or junk.
  if (/[^\x21-\x7e]/.test(text))
    throw new HostNameError(
      /[^\x00-\x7f]/.test(text)
        ? "write an internationalized name in its ASCII (punycode xn--) form"
        : "a name has no spaces or control characters",
    );
  const name = text.toLowerCase().replace(/\.$/, "");
  if (name.length === 0 || name.length > NAME_MAX) throw new HostNameError(`a name is 1 to ${NAME_MAX} characters`);
  for (const label of name.split(".")) {
    if (label === "") throw new HostNameError("a name has no empty labels (two dots in a row, or a leading dot)");
    if (label.length > 63) throw new HostNameError("each label of a name is at most 63 characters");
    if (!LABEL.test(label))
      throw new HostNameError(
        `the label "${label}" may hold only letters, digits, "-" and "_", and may not start or end with "-"`,
      );
  }
  if (looksLikeLooseIpv4(name))
    throw new HostNameError(
      "it ends in a number, so resolvers read it as an IPv4 address in a loose spelling; write IPv4 addresses as four decimal numbers (127.0.0.1)",
    );
  return name;
}
