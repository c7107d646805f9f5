/**
 * The Feishu long connection, faked on loopback: a WebSocket server (RFC 6455, written
 * out here so the fake depends on nothing) speaking the open platform's `pbbp2.Frame`
 * protobuf frames. An event goes out as a data frame (method 1) with headers type=event,
 * message_id, sum=1, seq=0 and the event JSON as payload; the client acknowledges with
 * the same frame carrying `{"code":200}`. Control frames (ping) are answered with pong.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

export type Frame = {
  seqId: number;
  logId: number;
  service: number;
  method: number;
  headers: Record<string, string>;
  payload: Buffer;
};

export type LongConnectionHub = {
  /** Handles an HTTP upgrade on the fake's server. */
  upgrade(request: IncomingMessage, socket: Duplex): void;
  /** Sends an event to every connected client; resolves with the client's ack payload. */
  sendEvent(event: unknown): Promise<{ code: number }>;
  connections(): number;
  /** Resolves once a client is connected and listening (it has pinged). */
  connected(timeoutMs?: number): Promise<void>;
  closeAll(): void;
};

export function createLongConnectionHub(): LongConnectionHub {
  /** Sockets whose client has pinged (ready for events); `opened` holds every upgraded one. */
  const sockets = new Set<Duplex>();
  const opened = new Set<Duplex>();
  const acks = new Map<string, (ack: { code: number }) => void>();
  const connectWaiters: (() => void)[] = [];
  let counter = 0;

  /** A client that hung up gets no more events and does not count as connected. */
  function forget(socket: Duplex) {
    sockets.delete(socket);
    opened.delete(socket);
  }

  function onFrame(socket: Duplex, frame: Frame) {
    if (frame.method === 0 && frame.headers.type === "ping") {
      // The client pings as soon as it is open and listens right after: from now on events reach it.
      if (!sockets.has(socket)) {
        sockets.add(socket);
        for (const waiter of connectWaiters.splice(0)) waiter();
      }
      socket.write(
        wsFrame(
          encodeFrame({
            ...frame,
            headers: { type: "pong" },
            payload: Buffer.from(
              JSON.stringify({ PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 120, ReconnectNonce: 30 }),
            ),
          }),
        ),
      );
      return;
    }
    const resolve = acks.get(frame.headers.message_id ?? "");
    if (frame.method === 1 && resolve) {
      acks.delete(frame.headers.message_id ?? "");
      resolve(JSON.parse(frame.payload.toString("utf8")) as { code: number });
    }
  }

  return {
    upgrade(request, socket) {
      const key = request.headers["sec-websocket-key"];
      const accept = createHash("sha1")
        .update(`${String(key)}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
        .digest("base64");
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      let buffer = Buffer.alloc(0);
      socket.on("data", (chunk: Buffer) => {
        buffer = Buffer.concat([buffer, chunk]);
        for (let parsed = readWsFrame(buffer); parsed; parsed = readWsFrame(buffer)) {
          buffer = buffer.subarray(parsed.consumed);
          if (parsed.opcode === 8) {
            forget(socket);
            socket.end();
            return;
          }
          if (parsed.opcode === 2) onFrame(socket, decodeFrame(parsed.payload));
        }
      });
      opened.add(socket);
      // An upgraded socket stays half-open when the client hangs up (terminate): gone at its end, not only at its close.
      socket.on("end", () => (forget(socket), socket.destroy()));
      socket.on("close", () => forget(socket));
      socket.on("error", () => forget(socket));
    },
    sendEvent(event) {
      counter += 1;
      const messageId = `ws-msg-${counter}`;
      const ack = new Promise<{ code: number }>((resolve) => acks.set(messageId, resolve));
      const frame = encodeFrame({
        seqId: counter,
        logId: counter,
        service: 1,
        method: 1,
        headers: { type: "event", message_id: messageId, sum: "1", seq: "0", trace_id: `trace-${counter}` },
        payload: Buffer.from(JSON.stringify(event)),
      });
      for (const socket of sockets) socket.write(wsFrame(frame));
      return ack;
    },
    connections: () => sockets.size,
    connected(timeoutMs = 10_000) {
      if (sockets.size > 0) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error("fake feishu: no long connection within the timeout")),
          timeoutMs,
        );
        connectWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    closeAll() {
      for (const socket of opened) socket.destroy();
      sockets.clear();
      opened.clear();
    },
  };
}

/** A single unmasked binary frame (servers never mask). */
function wsFrame(payload: Buffer): Buffer {
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x82, length])
      : length < 65_536
        ? Buffer.from([0x82, 126, length >> 8, length & 0xff])
        : Buffer.concat([Buffer.from([0x82, 127]), bigEndian64(length)]);
  return Buffer.concat([header, payload]);
}

function bigEndian64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64BE(BigInt(value));
  return buffer;
}

function readWsFrame(buffer: Buffer): { opcode: number; payload: Buffer; consumed: number } | undefined {
  if (buffer.length < 2) return undefined;
  const opcode = (buffer[0] as number) & 0x0f;
  const masked = ((buffer[1] as number) & 0x80) !== 0;
  let length = (buffer[1] as number) & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return undefined;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return undefined;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  const maskOffset = offset;
  if (masked) offset += 4;
  if (buffer.length < offset + length) return undefined;
  const payload = Buffer.from(buffer.subarray(offset, offset + length));
  if (masked)
    for (let index = 0; index < payload.length; index += 1)
      payload[index] = (payload[index] as number) ^ (buffer[maskOffset + (index % 4)] as number);
  return { opcode, payload, consumed: offset + length };
}

// --- pbbp2.Frame: 1 SeqID uint64, 2 LogID uint64, 3 service int32, 4 method int32,
// 5 headers (repeated Header { 1 key, 2 value }), 6 payload_encoding, 7 payload_type, 8 payload bytes, 9 LogIDNew.

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = BigInt(value);
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest > 0n) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0n);
  return Buffer.from(bytes);
}

function field(number: number, wireType: 0 | 2, value: Buffer | number): Buffer {
  const tag = varint((number << 3) | wireType);
  if (wireType === 0) return Buffer.concat([tag, varint(value as number)]);
  const bytes = value as Buffer;
  return Buffer.concat([tag, varint(bytes.length), bytes]);
}

export function encodeFrame(frame: Frame): Buffer {
  const headers = Object.entries(frame.headers).map(([key, value]) =>
    field(5, 2, Buffer.concat([field(1, 2, Buffer.from(key)), field(2, 2, Buffer.from(value))])),
  );
  return Buffer.concat([
    field(1, 0, frame.seqId),
    field(2, 0, frame.logId),
    field(3, 0, frame.service),
    field(4, 0, frame.method),
    ...headers,
    field(8, 2, frame.payload),
  ]);
}

function readFields(buffer: Buffer): { number: number; value: number | Buffer }[] {
  const fields: { number: number; value: number | Buffer }[] = [];
  let offset = 0;
  const readVarint = () => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buffer[offset] as number;
      offset += 1;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return Number(result);
      shift += 7n;
    }
  };
  while (offset < buffer.length) {
    const tag = readVarint();
    const number = tag >> 3;
    if ((tag & 7) === 0) fields.push({ number, value: readVarint() });
    else {
      const length = readVarint();
      fields.push({ number, value: buffer.subarray(offset, offset + length) });
      offset += length;
    }
  }
  return fields;
}

export function decodeFrame(buffer: Buffer): Frame {
  const frame: Frame = { seqId: 0, logId: 0, service: 0, method: 0, headers: {}, payload: Buffer.alloc(0) };
  for (const { number, value } of readFields(buffer)) {
    if (number === 1) frame.seqId = value as number;
    else if (number === 2) frame.logId = value as number;
    else if (number === 3) frame.service = value as number;
    else if (number === 4) frame.method = value as number;
    else if (number === 8) frame.payload = Buffer.from(value as Buffer);
    else if (number === 5) {
      const header = readFields(value as Buffer);
      const key = header.find((entry) => entry.number === 1)?.value as Buffer | undefined;
      const headerValue = header.find((entry) => entry.number === 2)?.value as Buffer | undefined;
      if (key) frame.headers[key.toString("utf8")] = headerValue?.toString("utf8") ?? "";
    }
  }
  return frame;
}
