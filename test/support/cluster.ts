/**
 * A real 3-master Redis Cluster on loopback for tests: three `redis-server --cluster-enabled yes`
 * processes, joined with `redis-cli --cluster create … --cluster-replicas 0`, ready once every
 * node reports `cluster_state:ok`.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Redis } from "ioredis"
import { freePort, redisServerBinary, waitForPing } from "./redis-server.js"
import { waitFor } from "./waitFor.js"

export interface ClusterNode {
  readonly host: string
  readonly port: number
}
export interface RedisClusterHandle {
  readonly nodes: ReadonlyArray<ClusterNode>
  /** SIGKILLs every node (their data dirs and nodes.conf stay). */
  readonly killAll: () => Promise<void>
  /** Starts every killed node again on its port with its data dir and nodes.conf; resolves once each answers PING (the cluster may still be settling). */
  readonly restartAll: () => Promise<void>
  readonly stop: () => Promise<void>
}

const run = promisify(execFile)

/** A free port whose cluster bus port (port + 10000) is free too. */
const clusterPort = async (taken: Set<number>): Promise<number> => {
  for (let i = 0; i < 50; i++) {
    const p = await freePort()
    if (p > 55_000 || taken.has(p) || taken.has(p + 10_000)) continue
    const bus = await new Promise<boolean>((resolve) => {
      const s = createServer()
      s.once("error", () => resolve(false))
      s.listen(p + 10_000, "127.0.0.1", () => s.close(() => resolve(true)))
    })
    if (bus) return p
  }
  throw new Error("no free port pair (port, port + 10000) for a Redis Cluster node")
}

const clusterOk = async (port: number): Promise<boolean> => {
  const c = new Redis({ host: "127.0.0.1", port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  c.on("error", () => {})
  try {
    await c.connect()
    const info = String(await c.call("CLUSTER", "INFO"))
    return info.includes("cluster_state:ok")
  } catch {
    return false
  } finally {
    c.disconnect()
  }
}

/** Starts the cluster; call `stop()` (e.g. in afterAll) to kill the servers and remove their files. */
export const startRedisCluster = async (timeoutMs = 30_000): Promise<RedisClusterHandle> => {
  const bin = redisServerBinary()
  const procs: Array<{ proc: ChildProcess; dir: string; port: number }> = []
  const nodeArgs = (port: number, dir: string) => [
    "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir,
    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"
  ]
  const kill = (proc: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve()
      proc.once("exit", () => resolve())
      proc.kill("SIGKILL")
    })
  const killAll = async () => {
    await Promise.all(procs.map(({ proc }) => kill(proc)))
  }
  const restartAll = async () => {
    await killAll()
    for (const p of procs) p.proc = spawn(bin, nodeArgs(p.port, p.dir), { stdio: "ignore" })
    await Promise.all(procs.map((p) => waitForPing(p.port)))
  }
  const stop = async () => {
    await killAll()
    for (const { dir } of procs) rmSync(dir, { recursive: true, force: true })
  }
  try {
    const taken = new Set<number>()
    const ports: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const p = await clusterPort(taken)
      taken.add(p).add(p + 10_000)
      ports.push(p)
    }
    for (const port of ports) {
      const dir = mkdtempSync(join(tmpdir(), "effect-asynq-cluster-"))
      procs.push({ proc: spawn(bin, nodeArgs(port, dir), { stdio: "ignore" }), dir, port })
    }
    await Promise.all(ports.map((p) => waitForPing(p)))
    await run("redis-cli", ["--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", "0", "--cluster-yes"], {
      timeout: timeoutMs
    })
    await waitFor(
      `Redis Cluster on ports ${ports.join(", ")} to reach cluster_state:ok`,
      () => Promise.all(ports.map(clusterOk)),
      (ok) => ok.every(Boolean),
      { timeoutMs }
    )
    return { nodes: ports.map((port) => ({ host: "127.0.0.1", port })), killAll, restartAll, stop }
  } catch (e) {
    await stop()
    throw e
  }
}
