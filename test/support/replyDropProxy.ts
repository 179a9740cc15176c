/**
 * A loopback TCP proxy in front of a real Redis that can lose one reply, the way a dropped
 * connection does: the chosen command reaches Redis and runs, but its reply (and every reply after
 * it on that connection) never reaches the client, and the client's connection is closed. ioredis
 * then reconnects (through the proxy again) and resends the commands it had no reply for.
 *
 * The proxy reads the RESP streams only to count: commands client → Redis, replies Redis → client
 * (the n-th reply answers the n-th command). Bytes are forwarded unchanged. Once it has dropped a
 * reply it is a plain pass-through again until armed anew.
 */
import { type LuaName, luaScript } from "../../src/redis/scripts.js"
import { createServer, type Server, type Socket, connect } from "node:net"

/** The end offset of the RESP value (RESP2, or RESP3 as a script may answer) starting at `pos`, or -1 while it is incomplete. */
const valueEnd = (b: Buffer, pos: number): number => {
  if (pos >= b.length) return -1
  const lineEnd = b.indexOf("\r\n", pos)
  if (lineEnd < 0) return -1
  const type = String.fromCharCode(b[pos]!)
  const n = Number(b.toString("latin1", pos + 1, lineEnd))
  const afterLine = lineEnd + 2
  const elements = (count: number): number => {
    let p = afterLine
    for (let i = 0; i < count; i++) {
      p = valueEnd(b, p)
      if (p < 0) return -1
    }
    return p
  }
  switch (type) {
    // One line: simple string, error, integer, null, boolean, double, big number.
    case "+":
    case "-":
    case ":":
    case "_":
    case "#":
    case ",":
    case "(":
      return afterLine
    // Length-prefixed: bulk string, bulk error, verbatim string.
    case "$":
    case "!":
    case "=":
      if (n < 0) return afterLine
      return b.length >= afterLine + n + 2 ? afterLine + n + 2 : -1
    // Aggregates: array, set, push (n elements); map (n pairs).
    case "*":
    case "~":
    case ">":
      return n < 0 ? afterLine : elements(n)
    case "%":
      return elements(2 * n)
    default:
      throw new Error(`replyDropProxy: not a RESP value (type byte ${JSON.stringify(type)})`)
  }
}

/** The bulk strings of a command (a RESP array of bulk strings), as latin1 strings. */
const commandArgv = (b: Buffer, start: number): Array<string> => {
  const argv: Array<string> = []
  let lineEnd = b.indexOf("\r\n", start)
  const n = Number(b.toString("latin1", start + 1, lineEnd))
  let p = lineEnd + 2
  for (let i = 0; i < n; i++) {
    lineEnd = b.indexOf("\r\n", p)
    const len = Number(b.toString("latin1", p + 1, lineEnd))
    argv.push(b.toString("latin1", lineEnd + 2, lineEnd + 2 + len))
    p = lineEnd + 2 + len + 2
  }
  return argv
}

/** Which command's reply to lose: true for the command (its argv, the name as sent). */
export type CommandMatch = (argv: ReadonlyArray<string>) => boolean

export interface ReplyDropProxy {
  readonly port: number
  /**
   * Loses the reply of the next command matching `match` (on any connection), after letting
   * `skip` matching commands through. Resolves once that reply was swallowed and the connection
   * closed.
   */
  readonly dropReplyOf: (match: CommandMatch, skip?: number) => Promise<void>
  /** How many replies were dropped so far. */
  readonly dropped: () => number
  readonly close: () => Promise<void>
}

/**
 * A run of the script `name`: its EVALSHA, or its EVAL with the source (a script's first call on a
 * connection goes as EVAL, src/redis/Redis.ts). ioredis sends the command name upper-case.
 */
export const scriptCallOf = (name: LuaName): CommandMatch => {
  const { sha, source } = luaScript(name)
  return (argv) => {
    const command = argv[0]?.toUpperCase()
    return (command === "EVALSHA" && argv[1] === sha) || (command === "EVAL" && argv[1] === source)
  }
}

/** Starts a proxy on a free loopback port in front of Redis at host:port. */
export const startReplyDropProxy = async (target: {
  readonly host: string
  readonly port: number
}): Promise<ReplyDropProxy> => {
  let armed: { match: CommandMatch; skip: number; done: () => void } | undefined
  let dropped = 0
  const sockets = new Set<Socket>()

  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    sockets.add(client)
    sockets.add(upstream)
    let commandBuf = Buffer.alloc(0)
    let replyBuf = Buffer.alloc(0)
    let commandsSeen = 0
    let repliesSeen = 0
    // The index of the command whose reply is to be lost on this connection.
    let dropAt: number | undefined
    let onDropped: (() => void) | undefined
    let cut = false

    const closeBoth = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on("data", (chunk: Buffer) => {
      if (cut) return
      // Count the commands of this chunk before forwarding it: Redis cannot answer a command
      // before it got it, so the drop point is known before its reply can arrive.
      commandBuf = Buffer.concat([commandBuf, chunk])
      let p = 0
      for (;;) {
        const end = valueEnd(commandBuf, p)
        if (end < 0) break
        const index = commandsSeen++
        if (armed && dropAt === undefined && armed.match(commandArgv(commandBuf, p))) {
          if (armed.skip > 0) armed.skip--
          else {
            dropAt = index
            onDropped = armed.done
            armed = undefined
          }
        }
        p = end
      }
      commandBuf = commandBuf.subarray(p)
      upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => {
      if (cut) return
      replyBuf = Buffer.concat([replyBuf, chunk])
      let p = 0
      for (;;) {
        const end = valueEnd(replyBuf, p)
        if (end < 0) break
        const index = repliesSeen++
        if (index === dropAt) {
          // Everything before this reply goes out; this one and the rest are lost with the connection.
          client.write(replyBuf.subarray(0, p), () => {
            cut = true
            dropped++
            closeBoth()
            onDropped?.()
          })
          cut = true
          return
        }
        p = end
      }
      if (p > 0) client.write(replyBuf.subarray(0, p))
      replyBuf = replyBuf.subarray(p)
    })
    client.on("error", () => {})
    upstream.on("error", () => {})
    client.on("close", () => {
      sockets.delete(client)
      upstream.destroy()
    })
    upstream.on("close", () => {
      sockets.delete(upstream)
      client.destroy()
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("replyDropProxy: no TCP address")

  return {
    port: address.port,
    dropReplyOf: (match, skip = 0) =>
      new Promise<void>((resolve) => {
        armed = { match, skip, done: resolve }
      }),
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      })
  }
}
