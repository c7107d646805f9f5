/** The running Node.js against package.json's `engines.node` (a `>=X.Y[.Z]` range). */
import { passed, failed, type CheckResult } from "./check-result.js";

export function checkNodeVersion(running: string, required: string | undefined): CheckResult {
  const title = `Node.js ${running}`;
  if (required === undefined) return passed("node", title, "package.json names no engines.node to compare with");
  const minimum = /^>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(required.trim());
  if (!minimum) return passed("node", title, `engines.node is "${required}", which the doctor cannot compare`);
  const want = minimum.slice(1).map((part) => Number(part ?? 0));
  const have = running
    .replace(/^v/, "")
    .split(".")
    .map((part) => Number.parseInt(part, 10) || 0);
  for (let index = 0; index < 3; index += 1) {
    const difference = (have[index] ?? 0) - (want[index] ?? 0);
    if (difference > 0) break;
    if (difference < 0) {
      return failed(
        "node",
        title,
        `LaodingBot needs Node.js ${required}`,
        `Install Node.js ${want[0]} or newer (for example \`nvm install ${want[0]}\`, or your distribution's nodejs package from NodeSource), then run \`npm ci\` again`,
      );
    }
  }
  return passed("node", `${title} (needs ${required})`);
}
