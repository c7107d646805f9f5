/**
 * Issue 8, item 6: fs errors map to codes the model can act on, and their reasons never
 * quote the fs message (which holds real paths, possibly outside the agent's trees).
 */
import { describe, expect, it } from "vitest";
import { fsError } from "../../src/toolhost/tools/file-access.js";

const fsFailure = (code: string) =>
  Object.assign(new Error(`${code}: failed, open '/srv/laoding/workspace/b/secret.txt'`), { code });

describe("fs errors", () => {
  it.each([
    ["ENAMETOOLONG", "INVALID_ARGS"],
    ["EINVAL", "INVALID_ARGS"],
    ["EILSEQ", "INVALID_ARGS"],
    ["EEXIST", "INVALID_ARGS"],
    ["ENOTEMPTY", "INVALID_ARGS"],
    ["ENOSPC", "FILE_TOO_LARGE"],
    ["ENOENT", "PATH_NOT_FOUND"],
    ["EACCES", "PATH_NOT_ALLOWED"],
    ["EIO", "INTERNAL"],
  ])("%s is %s and names only the model's argument", (code, expected) => {
    const error = fsError(fsFailure(code), "notes/x.md");
    expect(error.code).toBe(expected);
    expect(error.message).toContain("notes/x.md");
    expect(error.message).not.toContain("/srv/laoding");
    expect(error.message).not.toContain("secret");
  });

  it("an error without an errno code is INTERNAL without its message", () => {
    const error = fsError(new Error("boom at /srv/laoding/workspace/b"), "x");
    expect(error.code).toBe("INTERNAL");
    expect(error.message).not.toContain("/srv/laoding");
  });
});
