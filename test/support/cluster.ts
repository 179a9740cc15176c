/**
 * A real 3-master Redis Cluster on loopback for tests: three `redis-server --cluster-enabled yes`
 * processes (six with `replicas: 1`: three masters and a replica of each), joined with
 * `redis-cli --cluster create … --cluster-replicas <n>`, ready once every node reports
 * `cluster_state:ok` (and, with replicas, every replica has synced).
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
  /** SIGKILLs the node on `port` (its data dir and nodes.conf stay). */
  readonly killNode: (port: number) => Promise<void>
  /** Starts the node on `port` again (after killNode); resolves once it answers PING. */
  readonly restartNode: (port: number) => Promise<void>
  /** SIGSTOPs / SIGCONTs the node on `port`: it keeps its connections open and answers nothing while stopped. */
  readonly pauseNode: (port: number) => void
  readonly resumeNode: (port: number) => void
}

export interface ClusterOptions {
  /** Replicas per master (default 0: three nodes; 1: six nodes). */
  readonly replicas?: 0 | 1
  /** cluster-require-full-coverage (default true, Redis's): false keeps the other slots served while a slot has no master. */
  readonly requireFullCoverage?: boolean
  /** cluster-node-timeout in ms (default 5000): how long until a master is judged down and a failover starts. */
  readonly nodeTimeoutMs?: number
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
  const c = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
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

/** A master, or a replica whose link to its master is up. */
const replicaSynced = async (port: number): Promise<boolean> => {
  const c = new Redis({
    host: "127.0.0.1",
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null
  })
  c.on("error", () => {})
  try {
    await c.connect()
    const info = String(await c.call("INFO", "replication"))
    return info.includes("role:master") || info.includes("master_link_status:up")
  } catch {
    return false
  } finally {
    c.disconnect()
  }
}

/** Starts the cluster; call `stop()` (e.g. in afterAll) to kill the servers and remove their files. */
export const startRedisCluster = async (
  timeoutMs = 30_000,
  options: ClusterOptions = {}
): Promise<RedisClusterHandle> => {
  const bin = redisServerBinary()
  const procs: Array<{ proc: ChildProcess; dir: string; port: number }> = []
  const nodeArgs = (port: number, dir: string) => [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
    "--cluster-enabled",
    "yes",
    "--cluster-config-file",
    "nodes.conf",
    "--cluster-node-timeout",
    String(options.nodeTimeoutMs ?? 5000),
    "--cluster-require-full-coverage",
    options.requireFullCoverage === false ? "no" : "yes"
  ]
  const replicas = options.replicas ?? 0
  const nodeCount = 3 * (1 + replicas)
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
  const procOf = (port: number) => {
    const p = procs.find((x) => x.port === port)
    if (p === undefined) throw new Error(`no cluster node on port ${port}`)
    return p
  }
  const killNode = (port: number) => kill(procOf(port).proc)
  const restartNode = async (port: number) => {
    const p = procOf(port)
    await kill(p.proc)
    p.proc = spawn(bin, nodeArgs(p.port, p.dir), { stdio: "ignore" })
    await waitForPing(p.port)
  }
  const pauseNode = (port: number) => void procOf(port).proc.kill("SIGSTOP")
  const resumeNode = (port: number) => void procOf(port).proc.kill("SIGCONT")
  try {
    const taken = new Set<number>()
    const ports: Array<number> = []
    for (let i = 0; i < nodeCount; i++) {
      const p = await clusterPort(taken)
      taken.add(p).add(p + 10_000)
      ports.push(p)
    }
    for (const port of ports) {
      const dir = mkdtempSync(join(tmpdir(), "effect-asynq-cluster-"))
      procs.push({ proc: spawn(bin, nodeArgs(port, dir), { stdio: "ignore" }), dir, port })
    }
    await Promise.all(ports.map((p) => waitForPing(p)))
    await run(
      "redis-cli",
      [
        "--cluster",
        "create",
        ...ports.map((p) => `127.0.0.1:${p}`),
        "--cluster-replicas",
        String(replicas),
        "--cluster-yes"
      ],
      {
        timeout: timeoutMs
      }
    )
    await waitFor(
      `Redis Cluster on ports ${ports.join(", ")} to reach cluster_state:ok`,
      () => Promise.all(ports.map(clusterOk)),
      (ok) => ok.every(Boolean),
      { timeoutMs }
    )
    if (replicas > 0)
      await waitFor(
        `the replicas of the Redis Cluster on ports ${ports.join(", ")} to sync`,
        () => Promise.all(ports.map(replicaSynced)),
        (ok) => ok.every(Boolean),
        { timeoutMs }
      )
    return {
      nodes: ports.map((port) => ({ host: "127.0.0.1", port })),
      killAll,
      restartAll,
      stop,
      killNode,
      restartNode,
      pauseNode,
      resumeNode
    }
  } catch (e) {
    await stop()
    throw e
  }
}
