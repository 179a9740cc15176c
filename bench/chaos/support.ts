/** Small helpers shared by the chaos scenarios. */
import { Redis as IORedis } from "ioredis"

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** A plain ioredis connection for the scenario's own reads and faults (never the library's). */
export const rawConnection = (port: number): IORedis => {
  const c = new IORedis({ host: "127.0.0.1", port, maxRetriesPerRequest: null })
  c.on("error", () => {})
  return c
}

/** Rejects when `p` has not settled after `ms` (a scenario never runs unbounded). */
export const within = <A>(what: string, ms: number, p: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)
    })
  ])
}

/** Polls `read` every `everyMs` until `ok` holds; undefined when `ms` passed first. */
export const pollUntil = async <A>(
  read: () => Promise<A>,
  ok: (a: A) => boolean,
  ms: number,
  everyMs = 50
): Promise<A | undefined> => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    try {
      const a = await read()
      if (ok(a)) return a
    } catch {
      // a read during a fault may fail: read again
    }
    await sleep(everyMs)
  }
  return undefined
}

/** Kills every normal client connection except `killer`'s own (CLIENT KILL TYPE normal SKIPME yes). */
export const killClients = (killer: IORedis): Promise<unknown> =>
  killer.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").catch(() => 0)

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })

const cleanups: Array<() => Promise<unknown>> = []
/** Registers a stop to run if the run ends early (a scenario past its time limit); returns `stop` itself. */
export const track = (stop: () => Promise<unknown>): (() => Promise<unknown>) => {
  cleanups.push(stop)
  return stop
}
/** Runs every tracked stop (each once, failures ignored). */
export const stopAll = async () => {
  for (const stop of cleanups.splice(0)) await stop().catch(() => {})
}
