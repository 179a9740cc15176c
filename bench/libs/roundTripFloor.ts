/**
 * The round-trip floor: no library, a reference for what any Redis queue can reach on this machine.
 * One `node:net` socket with hand-written RESP (no command objects, no parser library):
 * - enqueue = one awaited EVALSHA of a 2-call script: the task's record (HSET <prefix><id> data
 *   <payload>) and its place in line with the payload in it (LPUSH <list> "<id>\n<payload>"), the
 *   least a queue that keeps a record per task writes;
 * - worker = one BRPOP at a time (FIFO) on a second socket, JSON.parse, the handler; no acknowledgement,
 *   no retry, no lease, no concurrency (`concurrency` is ignored).
 * It runs only the scenarios that are one round trip per task in every library: enqueue one by one
 * (awaited, and from 50 callers) and enqueue→handler latency (`floorScenarios`). A library can only
 * come close to it, so "÷ floor" in the report shows how much of a figure is the round trip itself.
 */
import { createHash } from "node:crypto"
import { connect, type Socket } from "node:net"
import type { AdapterFactory, LibAdapter, Payload } from "./types.js"
import { NotAvailable } from "./types.js"

/** A decoded RESP2 reply: simple/bulk string, integer, array, null; an error reply is an Error. */
type Reply = string | number | null | Error | ReadonlyArray<Reply>

/**
 * Parses one reply from `buf` at `at`: [reply, next offset], or undefined when it is not complete
 * yet. Bulk strings are decoded as UTF-8.
 */
const parseReply = (buf: Buffer, at: number): [Reply, number] | undefined => {
  const eol = buf.indexOf("\r\n", at)
  if (eol < 0) return undefined
  const line = buf.toString("latin1", at + 1, eol)
  const next = eol + 2
  switch (buf[at]) {
    case 0x2b: // +
      return [line, next]
    case 0x2d: // -
      return [new Error(line), next]
    case 0x3a: // :
      return [Number(line), next]
    case 0x24: {
      // $
      const n = Number(line)
      if (n < 0) return [null, next]
      if (buf.length < next + n + 2) return undefined
      return [buf.toString("utf8", next, next + n), next + n + 2]
    }
    case 0x2a: {
      // *
      const n = Number(line)
      if (n < 0) return [null, next]
      const items: Reply[] = []
      let p = next
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, p)
        if (r === undefined) return undefined
        items.push(r[0])
        p = r[1]
      }
      return [items, p]
    }
    default:
      throw new Error(`round-trip floor: unexpected reply byte ${buf[at]}`)
  }
}

/**
 * One connection: commands written as RESP arrays, replies handed to callers in order. The URL's
 * host, port and database (its path) are used; no password, no TLS (the bench's private server
 * needs neither).
 */
export const openConnection = async (url: string) => {
  const { hostname, port, pathname } = new URL(url)
  const socket: Socket = connect(Number(port || 6379), hostname || "127.0.0.1")
  socket.setNoDelay(true)
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  const waiting: Array<(r: Reply) => void> = []
  let pending: Buffer = Buffer.alloc(0)
  socket.on("data", (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    let at = 0
    for (;;) {
      const r = at < pending.length ? parseReply(pending, at) : undefined
      if (r === undefined) break
      at = r[1]
      waiting.shift()?.(r[0])
    }
    pending = at === pending.length ? Buffer.alloc(0) : pending.subarray(at)
  })
  // A connection that fails or closes fails every call still waiting for its reply.
  const failAll = (e: Error) => {
    for (const w of waiting.splice(0)) w(e)
  }
  socket.on("error", failAll)
  socket.on("close", () => failAll(new Error("round-trip floor: connection closed")))
  const call = (args: ReadonlyArray<string>): Promise<Reply> =>
    new Promise((resolve, reject) => {
      waiting.push((r) => (r instanceof Error ? reject(r) : resolve(r)))
      let frame = `*${args.length}\r\n`
      for (const a of args) frame += `$${Buffer.byteLength(a)}\r\n${a}\r\n`
      socket.write(frame)
    })
  const db = pathname.replace(/^\//, "")
  if (db !== "" && db !== "0") await call(["SELECT", db])
  return {
    call,
    close: () => {
      socket.destroy()
    }
  }
}

/** The scenarios the floor runs (the others need acknowledgement, bulk writes or concurrency). */
export const floorScenarios: ReadonlySet<string> = new Set(["enqueueSerial", "enqueueConcurrent", "latency"])

const enqueueScript =
  'redis.call("HSET", KEYS[1] .. ARGV[1], "data", ARGV[2])\nredis.call("LPUSH", KEYS[2], ARGV[1] .. "\\n" .. ARGV[2])\nreturn 1'

export const make: AdapterFactory = async ({ redisUrl, queue }) => {
  const producer = await openConnection(redisUrl)
  const sha = createHash("sha1").update(enqueueScript).digest("hex")
  await producer.call(["SCRIPT", "LOAD", enqueueScript])
  const prefix = `floor:{${queue}}:t:`
  const list = `floor:{${queue}}:wait`
  let nextId = 0
  const adapter: LibAdapter = {
    name: "floor",
    settings:
      "no library: node:net + hand-written RESP; enqueue = awaited EVALSHA of a 2-call script (HSET record, LPUSH id+payload); " +
      "worker = one BRPOP at a time (FIFO) on a second socket, no acknowledgement; runs enqueue one-by-one and latency only",
    enqueueOne: async (payload) => {
      await producer.call(["EVALSHA", sha, "2", prefix, list, String(nextId++), JSON.stringify(payload)])
    },
    enqueueBulk: () => Promise.reject(new NotAvailable("the round-trip floor has no bulk enqueue")),
    startWorker: async (_concurrency, handler) => {
      const consumer = await openConnection(redisUrl)
      let running = true
      let failure: unknown
      const loop = (async () => {
        while (running) {
          const r = await consumer.call(["BRPOP", list, "1"])
          if (!Array.isArray(r)) continue // timed out: nothing came within a second
          const item = r[1] as string
          handler(JSON.parse(item.slice(item.indexOf("\n") + 1)) as Payload)
        }
      })().catch((e: unknown) => {
        failure = e
      })
      return {
        stop: async () => {
          running = false
          await loop
          consumer.close()
          if (failure !== undefined) throw failure
        }
      }
    },
    close: async () => {
      producer.close()
    }
  }
  return adapter
}
