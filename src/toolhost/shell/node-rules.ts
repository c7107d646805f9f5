/**
 * node: its option grammar (Node 20's option table: which options take a value, given
 * as `--opt=value` or as the next word; `_` and `-` are the same in a name; no combined
 * letters), then what it may load. Refused: code on the command line (`-e`, `-p`,
 * `--eval`, `--print`), modules that are not files (`--import`, `--require`,
 * `--loader` with a `data:` or `http:` URL, in any case and however the URL parser
 * reads it: ` DATA:` is `data:`), files read from its input (`-`, `/dev/stdin`, also for
 * `--env-file`, which can set NODE_OPTIONS), the REPL (`-i`), the inspector (anyone
 * who reaches its port runs code), `node inspect` (a debugger run from its input), and
 * no script at all (`echo CODE | node`).
 */
import { fileURLToPath } from "node:url";
import { readOptions, type OptionGrammar, type OptionSpec } from "./option-grammar.js";
import { inputProblem } from "./script-source.js";
import type { Word } from "./shell-words.js";

const words = (list: string): string[] => list.split(/\s+/).filter(Boolean);
const table = (list: string, spec: OptionSpec): Record<string, OptionSpec> =>
  Object.fromEntries(words(list).map((name) => [name, spec]));

/** Node 20's options that take a value (integer, string, host:port and list options, and their aliases). */
const WITH_VALUE = `--heapsnapshot-near-heap-limit --v8-pool-size --secure-heap-min --secure-heap --heap-prof-interval --cpu-prof-interval
  --test-timeout --network-family-autoselection-attempt-timeout --test-concurrency --max-http-header-size --experimental-sea-config
  --heapsnapshot-signal --diagnostic-dir --input-type --experimental-policy --policy-integrity --experimental-default-type --eval
  --title --disable-proto --env-file --test-shard --trace-event-categories --report-dir --build-snapshot-config --unhandled-rejections
  --snapshot-blob --icu-data-dir --report-filename --tls-cipher-list --use-largepages --tls-keylog --openssl-config
  --trace-event-file-pattern --heap-prof-dir --report-signal --dns-result-order --cpu-prof-name --env-file-if-exists --heap-prof-name
  --inspect-publish-uid --redirect-warnings --cpu-prof-dir --trace-require-module --inspect-port --debug-port --disable-warning
  --experimental-loader --loader --allow-fs-read --allow-fs-write --import --conditions -C --security-revert --security-reverts
  --watch-path --test-name-pattern --test-reporter --require -r --test-reporter-destination --report-directory -e -p --print -pe`;
/** Node 20's flags. */
const FLAGS = `--watch-preserve-output --force-async-hooks-checks --interactive -i --experimental-vm-modules --deprecation --test-force-exit
  --tls-min-v1.0 --allow-wasi --experimental-fetch --enable-source-maps --experimental-require-module --check -c --experimental-network-imports
  --experimental-global-webcrypto --track-heap-objects --cpu-prof --experimental-detect-module --trace-atomics-wait --allow-addons
  --verify-base-objects --build-snapshot --watch --trace-deprecation --experimental-test-coverage --throw-deprecation --insecure-http-parser
  --force-node-api-uncaught-exceptions-policy --addons --warnings --tls-min-v1.1 --expose-internals --pending-deprecation --tls-min-v1.2
  --preserve-symlinks-main --global-search-paths --experimental-global-customevent --test --trace-sigint --openssl-shared-config --help -h
  --experimental-network-inspection --zero-fill-buffers --use-bundled-ca --openssl-legacy-provider --force-fips --experimental-shadow-realm
  --completion-bash --preserve-symlinks --v8-options --experimental-test-module-mocks --disable-wasm-trap-handler --report-exclude-network
  --experimental-websocket --tls-min-v1.3 --enable-fips --report-on-fatalerror --node-snapshot --experimental-permission
  --experimental-wasm-modules --use-openssl-ca --experimental-eventsource --extra-info-on-fatal-exception --trace-uncaught
  --experimental-repl-await --trace-warnings --trace-tls --tls-max-v1.2 --experimental-print-required-tla --report-compact
  --debug-arraybuffer-allocations --trace-sync-io --force-context-aware --allow-child-process --allow-worker --test-only
  --network-family-autoselection --enable-network-family-autoselection --report-uncaught-exception --trace-exit --version -v
  --frozen-intrinsics --test-udp-no-try-send --tls-max-v1.3 --heap-prof --report-on-signal --trace-promises
  --experimental-import-meta-resolve --trace-events-enabled`;
/** V8's options and Node's retired ones: a value only as `--opt=value`. */
const ATTACHED_ONLY = `--expose-gc --jitless --disallow-code-generation-from-strings --prof --abort-on-uncaught-exception
  --huge-max-old-generation-size --interpreted-frames-native-stack --stack-trace-limit --perf-basic-prof-only-functions
  --max-semi-space-size --perf-prof-unwinding-info --enable-etw-stack-walking --perf-basic-prof --max-old-space-size --perf-prof
  --harmony-shadow-realm --experimental-wasi-unstable-preview1 --http-parser --experimental-report --experimental-modules
  --experimental-abortcontroller --node-memory-debug --experimental-specifier-resolution --es-module-specifier-resolution
  --experimental-json-modules --experimental-worker --experimental-top-level-await --napi-modules`;
/** The inspector and the old debugger: `--inspect[=host:port]`. */
const INSPECTOR = "--inspect --inspect-brk --inspect-wait --inspect-brk-node --debug --debug-brk";

const NODE_GRAMMAR: OptionGrammar = {
  program: "node",
  short: {},
  long: {
    ...table(FLAGS, {}),
    ...table(ATTACHED_ONLY, { value: "rest" }),
    ...table(INSPECTOR, { value: "rest" }),
    ...table(WITH_VALUE, { value: "next" }),
    // The rest of the line is the tick processor's.
    "--prof-process": { ends: true },
  },
  clusters: false,
  operandEnds: true,
  equals: true,
  // `--experimental_loader` is `--experimental-loader`; `--no-warnings` turns a flag off.
  normalize: (name) => {
    const dashed = name.startsWith("--") ? `--${name.slice(2).replaceAll("_", "-")}` : name;
    return dashed.startsWith("--no-") && words(FLAGS).includes(`--${dashed.slice(5)}`)
      ? `--${dashed.slice(5)}`
      : dashed;
  },
  unknownWithEquals: true,
};

const CODE = new Set(["--eval", "-e", "--print", "-p", "-pe"]);
const MODULE_LOADERS = new Set(["--import", "--require", "-r", "--experimental-loader", "--loader"]);
/** Files read as configuration that can name code to run (an env file can set NODE_OPTIONS). */
const CONFIG_FILES = new Set([
  "--env-file",
  "--env-file-if-exists",
  "--snapshot-blob",
  "--openssl-config",
  "--experimental-policy",
  "--build-snapshot-config",
  "--experimental-sea-config",
]);
const INSPECTOR_OPTIONS = new Set([...words(INSPECTOR), "--inspect-port", "--debug-port", "--inspect-publish-uid"]);
const STANDALONE = new Set([
  "--version",
  "-v",
  "--help",
  "-h",
  "--v8-options",
  "--completion-bash",
  "--test",
  "--prof-process",
]);

export function nodeProblem(program: string, args: Word[]): string | undefined {
  const read = readOptions(args, { ...NODE_GRAMMAR, program });
  if ("problem" in read) return read.problem;
  for (const { name, written, value } of read.options) {
    if (CODE.has(name))
      return `${program} ${written} runs code given on the command line; write a script with file.write and run that`;
    if (name === "--interactive" || name === "-i")
      return `${program} ${written} starts the REPL, which runs code read from its input`;
    if (INSPECTOR_OPTIONS.has(name))
      return `${program} ${written} opens the inspector, through which whoever reaches its port runs code`;
    if (MODULE_LOADERS.has(name)) {
      const problem = moduleProblem(program, name, value ?? "");
      if (problem) return problem;
    }
    if (CONFIG_FILES.has(name)) {
      const problem = inputProblem(program, `${name}'s file`, value ?? "");
      if (problem) return problem;
    }
  }
  if (read.endedBy === "--prof-process") return undefined;
  const script = read.operands[0];
  if (script === undefined) {
    return read.options.some(({ name }) => STANDALONE.has(name))
      ? undefined
      : `${program}: without a script file it runs code piped to it; write a script with file.write and run that`;
  }
  if (script === "inspect" && read.endedBy === script)
    return `${program} inspect starts the debugger, which runs commands read from its input`;
  return inputProblem(program, "its script", script);
}

/** A module to load: a package name or a path (a file the agent wrote), a `file:` or `node:` URL, nothing else. */
function moduleProblem(program: string, option: string, specifier: string): string | undefined {
  let url: URL | undefined;
  try {
    // The parser Node uses: it drops leading spaces and any tab or newline, and lowercases the scheme.
    url = new URL(specifier);
  } catch {
    return inputProblem(program, `the ${option} module`, specifier);
  }
  if (url.protocol === "node:") return undefined;
  if (url.protocol === "file:") {
    try {
      return inputProblem(program, `the ${option} module`, fileURLToPath(url));
    } catch {
      return `${program} ${option} ${specifier} is not a local file`;
    }
  }
  return url.protocol === "data:"
    ? `${program} ${option} data: URL runs code given on the command line; write the module with file.write`
    : `${program} ${option} ${url.protocol} URL loads code that is not a file; only files, packages, file: and node: URLs may be loaded`;
}
