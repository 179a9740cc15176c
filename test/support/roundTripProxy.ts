/**
 * A loopback TCP proxy in front of a real Redis that counts round trips: every burst of bytes the
 * client sends after Redis last answered starts a new round trip (a pipeline is one burst however
 * TCP splits it). Each round trip records the command names it carried, so a test can assert how
 * many waits a cold start costs before its first enqueue. Bytes are forwarded unchanged.
 */
import { connect, createServer, type Server, type Socket } from "node:net"

export interface RoundTrip {
  /** Upper-case command names sent in this round trip, in order (e.g. ["HELLO", "CLIENT", "CLIENT"]). */
  readonly commands: Array<string>
}

export interface RoundTripProxy {
  readonly url: string
  /** Every round trip of every connection so far, in order. */
  readonly roundTrips: () => ReadonlyArray<RoundTrip>
  readonly close: () => Promise<void>
}

/** The command names in a client's RESP stream (arrays of bulk strings); `rest` is an incomplete tail. */
const commandNames = (b: Buffer): { names: Array<string>; rest: Buffer } => {
  const names: Array<string> = []
  let pos = 0
  for (;;) {
    const start = pos
    if (pos >= b.length || b[pos] !== 0x2a /* * */) return { names, rest: b.subarray(start) }
    let end = b.indexOf("\r\n", pos)
    if (end < 0) return { names, rest: b.subarray(start) }
    const count = Number(b.toString("latin1", pos + 1, end))
    pos = end + 2
    let name: string | undefined
    for (let i = 0; i < count; i++) {
      end = b.indexOf("\r\n", pos)
      if (end < 0) return { names, rest: b.subarray(start) }
      const len = Number(b.toString("latin1", pos + 1, end))
      if (b.length < end + 2 + len + 2) return { names, rest: b.subarray(start) }
      if (i === 0) name = b.toString("latin1", end + 2, end + 2 + len).toUpperCase()
      pos = end + 2 + len + 2
    }
    names.push(name ?? "")
  }
}

export const startRoundTripProxy = async (target: {
  readonly host: string
  readonly port: number
}): Promise<RoundTripProxy> => {
  const trips: Array<RoundTrip> = []
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    sockets.add(client)
    sockets.add(upstream)
    let current: RoundTrip | undefined
    let pending: Buffer = Buffer.alloc(0)
    client.on("data", (chunk: Buffer) => {
      if (current === undefined) {
        current = { commands: [] }
        trips.push(current)
      }
      const { names, rest } = commandNames(Buffer.concat([pending, chunk]))
      current.commands.push(...names)
      pending = rest
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => {
      current = undefined // the client's next bytes start a new round trip
      client.write(chunk)
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", end)
    upstream.on("close", end)
    client.on("error", end)
    upstream.on("error", end)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `redis://127.0.0.1:${port}`,
    roundTrips: () => trips,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
