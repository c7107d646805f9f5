import { describe, expect, it } from "vitest";
import { endToEndHeaders } from "../../src/egress/forwarded-headers.js";

describe("endToEndHeaders", () => {
  it("drops hop-by-hop, Proxy-* and Connection-named headers, keeps repeats and case", () => {
    const kept = [
      ["Set-Cookie", "a=1"],
      ["Set-Cookie", "b=2"],
      ["Authorization", "Bearer token"],
    ];
    const dropped = [
      ["Host", "a.test"],
      ["Connection", "keep-alive, X-Hop"],
      ["X-Hop", "1"],
      ["Keep-Alive", "timeout=5"],
      ["Proxy-Authorization", "Basic c2VjcmV0"],
      ["Proxy-Connection", "keep-alive"],
      ["Transfer-Encoding", "chunked"],
      ["TE", "trailers"],
      ["Upgrade", "websocket"],
      ["Expect", "100-continue"],
    ];
    expect(endToEndHeaders([...dropped, ...kept].flat(), ["host"])).toEqual(kept.flat());
  });
});
