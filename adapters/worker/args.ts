/** Command-line options of `effect-asynq worker`. */
import type { LogLevel } from "effect/LogLevel"
import type { LogFormat } from "./logging.js"

export interface WorkerArgs {
  readonly handlersModule: string
  readonly redisUrl?: string
  readonly concurrency?: number
  readonly queues?: Record<string, number>
  readonly strictPriority?: boolean
  readonly shutdownTimeoutMs?: number
  readonly logFormat?: LogFormat
  readonly logLevel?: LogLevel
}

export const workerUsage = `usage: effect-asynq worker <handlers-module> [options]

The module exports its handlers as \`default\` or \`handlers\` (a ServeMux, a record of
task-type pattern -> handler, or one handler function), and optionally \`options\` (server options).

options:
  --redis <url>              Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379)
  --concurrency <n>          tasks processed at the same time (default: number of CPUs)
  --queues <q=w,...>         queues and weights, e.g. critical=6,default=3,low=1 (default: default=1)
  --strict                   strict priority: higher-weight queues first
  --shutdown-timeout <ms>    wait this long for running tasks on SIGTERM/SIGINT (default 8000)
  --log-format <f>           logfmt (default), json or pretty
  --log-level <l>            Trace, Debug, Info (default), Warn, Error, None
`

/** Parsed arguments, or a message saying what is wrong. */
export const parseWorkerArgs = (argv: ReadonlyArray<string>): { ok: true; args: WorkerArgs } | { ok: false; error: string } => {
  const out: { -readonly [K in keyof WorkerArgs]?: WorkerArgs[K] } = {}
  const positional: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new Error(`${a} needs a value`)
      return v
    }
    const int = (name: string) => {
      const v = value()
      const n = Number(v)
      if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number, got "${v}"`)
      return n
    }
    try {
      switch (a) {
        case "--redis": out.redisUrl = value(); break
        case "--concurrency": out.concurrency = int(a); break
        case "--strict": out.strictPriority = true; break
        case "--shutdown-timeout": out.shutdownTimeoutMs = int(a); break
        case "--log-format": {
          const f = value()
          if (f !== "logfmt" && f !== "json" && f !== "pretty") throw new Error(`--log-format must be logfmt, json or pretty, got "${f}"`)
          out.logFormat = f
          break
        }
        case "--log-level": {
          const l = value()
          const levels = ["All", "Trace", "Debug", "Info", "Warn", "Error", "Fatal", "None"]
          if (!levels.includes(l)) throw new Error(`--log-level must be one of ${levels.join(", ")}, got "${l}"`)
          out.logLevel = l as LogLevel
          break
        }
        case "--queues": {
          const queues: Record<string, number> = {}
          for (const part of value().split(",")) {
            const [name, w = "1"] = part.split("=")
            const weight = Number(w)
            if (!name || !Number.isInteger(weight) || weight < 1) throw new Error(`--queues expects name=weight pairs like critical=6,default=3, got "${part}"`)
            queues[name] = weight
          }
          out.queues = queues
          break
        }
        default:
          if (a.startsWith("--")) throw new Error(`unknown option ${a}`)
          positional.push(a)
      }
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) }
    }
  }
  if (positional.length !== 1) return { ok: false, error: positional.length === 0 ? "the handlers module is missing" : `one handlers module expected, got ${positional.join(" ")}` }
  return { ok: true, args: { ...out, handlersModule: positional[0]! } }
}
