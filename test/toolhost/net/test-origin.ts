/**
 * Loopback origins for the child's network tests: an HTTP (or HTTPS, with a self-signed
 * certificate made by openssl in a temp folder) server on 127.0.0.1:0 that the stand-in
 * proxy reaches under any name.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export type Origin = { port: number; server: Server; close(): Promise<void> };

export async function startOrigin(handler: RequestListener, tls?: TestCertificate): Promise<Origin> {
  const server = tls ? createTlsServer({ key: tls.key, cert: tls.cert }, handler) : createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type TestCertificate = { key: Buffer; cert: Buffer };

/** A self-signed certificate for `name` and 127.0.0.1 (its own CA), made in `dir`. */
export function makeTestCertificate(dir: string, name: string): TestCertificate {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`,
      "-addext",
      `subjectAltName=DNS:${name},IP:127.0.0.1`,
    ],
    { stdio: "ignore" },
  );
  return { key: readFileSync(key), cert: readFileSync(cert) };
}
