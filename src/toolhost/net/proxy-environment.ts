import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/**
 * The environment that sends a command's traffic to the egress forwarder
 * (proxy-forwarder.ts). Both spellings are set: curl reads `http_proxy` in lower case
 * only (the upper-case form is ignored for CGI safety), most other tools read either.
 * `ALL_PROXY` covers the tools that use it for every scheme (curl, git over some
 * transports, many language HTTP clients).
 */
export function proxyEnvironment(url: string): Record<string, string> {
  return {
    ...nodeFetchThroughProxy(),
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    ALL_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    all_proxy: url,
    // Empty on purpose: everything goes through the proxy, loopback and internal names
    // included. Inside the jail there is nothing to reach directly (the network namespace
    // holds only loopback, where the forwarder is the only listener), and the proxy is
    // what decides: a direct attempt would fail with a bare "connection refused" where the
    // proxy says which host was refused and why. Set rather than left out, so that a
    // NO_PROXY=localhost,... from the environment commands start with cannot survive.
    NO_PROXY: "",
    no_proxy: "",
  };
}

/**
 * The proxy URL of one call: the call's tag as the proxy user, which clients send as
 * Proxy-Authorization, so the forwarder can tell whose request the proxy refused (the
 * egress proxy ignores the credential: the socket a connection arrives on is the agent).
 */
export function callProxyUrl(url: string, tag: string): string {
  const tagged = new URL(url);
  tagged.username = tag;
  tagged.password = "x";
  return tagged.href.replace(/\/$/, "");
}

/**
 * Node's own `fetch` ignores HTTP_PROXY (until NODE_USE_ENV_PROXY, Node 24), and many MCP
 * servers are Node programs that use it (`server-github`): in a jail whose only way out
 * is the proxy they would reach nothing. Node 20-23 get a preload that routes `fetch`
 * through the proxy (undici's ProxyAgent as the global dispatcher, the same undici
 * generation Node 20-23 carry inside); Node 24 and later get the switch itself. A program
 * that sets its own NODE_OPTIONS replaces this.
 */
function nodeFetchThroughProxy(): Record<string, string> {
  const major = Number(process.versions.node.split(".")[0]);
  if (major >= 24) return { NODE_USE_ENV_PROXY: "1" };
  preload ??= fetchPreload();
  return preload ? { NODE_OPTIONS: `--import=${preload}` } : {};
}

let preload: string | undefined;

function fetchPreload(): string | undefined {
  let undici: string;
  try {
    undici = pathToFileURL(createRequire(import.meta.url).resolve("undici")).href;
  } catch {
    return undefined;
  }
  const source = `import { ProxyAgent, setGlobalDispatcher } from ${JSON.stringify(undici)}; const proxy = process.env.HTTPS_PROXY || process.env.HTTP_PROXY; if (proxy) setGlobalDispatcher(new ProxyAgent(proxy));`;
  // NODE_OPTIONS is split at spaces: the module travels URL-encoded.
  return `data:text/javascript,${encodeURIComponent(source)}`;
}
