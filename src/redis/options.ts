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
   * whose cause is a `CommandTimeout` (a lost reply: the command may still run on the server), and
   * whose message names the server and the command (never its arguments). Default 5000 ms
   * (`defaultCommandTimeoutMs`, Redis's own busy-script threshold); the serverless handlers default
   * to 2000 ms. Covers every topology: on a Redis Cluster a call made while no node is reachable
   * fails after it too. A write whose reply timed out is sent again as the same write (an enqueue
   * makes no duplicate); a lease it took expires and is recovered. Blocking reads (the worker's
   * BLPOP) have their own bound: their block time plus a grace. A whole number of ms, 1 to 2147483647.
   */
  readonly commandTimeoutMs?: number
  /**
   * How long a call keeps trying while the server answers `LOADING` (it is still loading its dataset
   * after a restart), before it fails with a RedisError saying so. The command did not run; it is
   * sent again after 50 ms, doubling to 500 ms. Default 5000 ms (`defaultLoadingTimeoutMs`);
   * 0 fails at the first `LOADING` answer.
   */
  readonly loadingTimeoutMs?: number
}

/** The command timeout when `commandTimeoutMs` is not given (ms): Redis's own busy-script threshold (`busy-reply-threshold`). */
export const defaultCommandTimeoutMs = 5000

/** How long a call waits out `LOADING` answers when `loadingTimeoutMs` is not given (ms). */
export const defaultLoadingTimeoutMs = 5000

/** The longest delay Node's timers take (ms); a longer one fires at once. */
const maxTimerMs = 2_147_483_647

/** Why the time options are invalid (`connectTimeoutMs`, `commandTimeoutMs`, `loadingTimeoutMs`), or undefined. */
export const invalidTimeouts = (o: RedisOptions): string | undefined => {
  for (const [field, min] of [
    ["connectTimeoutMs", 1],
    ["commandTimeoutMs", 1],
    ["loadingTimeoutMs", 0]
  ] as const) {
    const v = o[field]
    if (v !== undefined && !(Number.isInteger(v) && v >= min && v <= maxTimerMs))
      return `${field} must be a whole number of milliseconds from ${min} to ${maxTimerMs}, got ${v}`
  }
  return undefined
}

/** The address to show in errors and logs: never the password. */
export const describeTarget = (o: RedisOptions): string => {
  if (o.cluster) return `cluster ${o.cluster.map((n) => `${n.host}:${n.port}`).join(",")}`
  if (o.sentinel)
    return `sentinel ${o.sentinel.name}@${o.sentinel.sentinels.map((n) => `${n.host}:${n.port}`).join(",")}`
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
