/** How to reach Redis: a single node, a Redis Cluster or Sentinel-managed master. */
export interface RedisNode {
  readonly host: string
  readonly port: number
}

/** How to reach Redis: a URL, a Redis Cluster, or a Sentinel-managed master, with credentials, TLS and timeouts. */
export interface RedisOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` for TLS. Default `redis://127.0.0.1:6379`. */
  readonly url?: string
  /** Redis Cluster seed nodes. When set, `url` only supplies credentials and TLS. */
  readonly cluster?: ReadonlyArray<RedisNode>
  /** Redis Sentinel: sentinel nodes and the master's name. */
  readonly sentinel?: { readonly sentinels: ReadonlyArray<RedisNode>; readonly name: string }
  readonly username?: string
  readonly password?: string
  readonly db?: number
  /** TLS options passed to Node's `tls.connect`; `true` turns TLS on with defaults. `rediss://` implies it. */
  readonly tls?: boolean | Record<string, unknown>
  /** How long opening the connection may take before a RedisConnectionError. Default 5000 ms. */
  readonly connectTimeoutMs?: number
  /** How many times a command is retried across reconnects before it fails. Default 3. */
  readonly maxRetriesPerRequest?: number
  /**
   * How long one command (or one pipeline) may wait for its reply before it fails with a RedisError
   * "Command timed out" (a stalled server, e.g. under CLIENT PAUSE, or a lost connection). Default:
   * none for the library (a long-lived worker waits); the serverless handlers default to 2000 ms so
   * that a stalled Redis ends an invocation with a clear error before the function's own timeout.
   * The command may still run on the server later; a lease it took expires and is recovered.
   */
  readonly commandTimeoutMs?: number
}

/** The address to show in errors and logs: never the password. */
export const describeTarget = (o: RedisOptions): string => {
  if (o.cluster) return `cluster ${o.cluster.map((n) => `${n.host}:${n.port}`).join(",")}`
  if (o.sentinel) return `sentinel ${o.sentinel.name}@${o.sentinel.sentinels.map((n) => `${n.host}:${n.port}`).join(",")}`
  const url = o.url ?? "redis://127.0.0.1:6379"
  // ioredis's scheme-less forms ("host:port", a unix socket path) carry no password.
  if (!url.includes("://")) return url
  try {
    const u = new URL(url)
    if (u.password) u.password = "***"
    return u.toString()
  } catch {
    return "(unparseable REDIS_URL)"
  }
}
