/**
 * The CLI's last-resort error printer (runCli): whatever a command throws, the line it
 * prints holds no secret: neither the environment's secret variables, nor those a command
 * added once it loaded the configuration (context.secrets), nor token-shaped text.
 */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliContext, Command } from "../../src/cli/cli-context.js";
import { runCli } from "../../src/cli/run-cli.js";

const TELEGRAM_TOKEN = "5550001234:AAHk9-SeCrEtTeLeGrAm_0123456789abcdef";

async function printed(
  failure: (context: CliContext) => Error,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stderr: string }> {
  const failing: Command = {
    name: "fail",
    summary: "fails",
    usage: "",
    run: (context) => Promise.reject(failure(context)),
  };
  const stderr = new PassThrough();
  let text = "";
  stderr.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  const stdin = new PassThrough();
  stdin.end();
  const code = await runCli(
    { args: ["fail"], env, cwd: "/", repoRoot: "/", stdout: new PassThrough(), stderr, stdin },
    [failing],
  );
  return { code, stderr: text };
}

describe("the CLI error printer", () => {
  it("prints one redacted line, with the stack only at debug level", async () => {
    for (const level of ["info", "debug"]) {
      const run = await printed(
        () =>
          new Error(`request to http://127.0.0.1:1/bot${TELEGRAM_TOKEN}/getMe failed; key sk-envSeCrEt1234 refused`),
        { LOG_LEVEL: level, LLM_API_KEY: "sk-envSeCrEt1234" },
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /^laoding fail: (Error: )?request to http:\/\/127\.0\.0\.1:1\/bot\S*\[redacted\]\/getMe failed; key \[redacted\] refused/,
      );
      expect(run.stderr).not.toContain("SeCrEtTeLeGrAm");
      expect(run.stderr).not.toContain("sk-envSeCrEt1234");
      expect(run.stderr.includes("\n    at "), level).toBe(level === "debug");
    }
  });

  it("also keeps out the secrets a command learnt from the configuration files", async () => {
    const run = await printed((context) => {
      context.secrets?.add("fileSeCrEt-9f8e7d");
      return new Error("Feishu said: app_secret fileSeCrEt-9f8e7d is wrong");
    }, {});
    expect(run.stderr).toBe("laoding fail: Feishu said: app_secret [redacted] is wrong\n");
  });
});
