/**
 * asynq's `Option.String()` forms, which a scheduler stores in SchedulerEntry.enqueue_options
 * (and asynq's Inspector reads back): `MaxRetry(3)`, `Queue("low")`, `Timeout(30m0s)`,
 * `Deadline(Tue Jan  1 00:00:00 UTC 2030)`, `Header(["k","v"])`, …  Durations are milliseconds.
 */
import { goDuration, parseGoDuration } from "./goDuration.js"
import { goJson, goQuote, goUnquote } from "./goQuote.js"
import { type GoZone, goUnixDate, parseGoUnixDate } from "./goTime.js"

/** One function per asynq option; each returns exactly what Go's `Option.String()` prints. */
export const optionString = {
  /** asynq clamps a negative count to 0. */
  maxRetry: (n: number): string => `MaxRetry(${Math.max(0, Math.trunc(n))})`,
  /** `Queue("name")`. */
  queue: (name: string): string => `Queue(${goQuote(name)})`,
  /** `TaskID("id")`. */
  taskId: (id: string): string => `TaskID(${goQuote(id)})`,
  /** `Timeout(<Go duration>)`. */
  timeout: (ms: number): string => `Timeout(${goDuration(ms)})`,
  /** `Deadline(<Go UnixDate>)`, in UTC unless a zone is given. */
  deadline: (t: Date | number, zone?: GoZone): string => `Deadline(${goUnixDate(t, zone)})`,
  /** `Unique(<Go duration>)`. */
  unique: (ttlMs: number): string => `Unique(${goDuration(ttlMs)})`,
  /** `ProcessAt(<Go UnixDate>)`, in UTC unless a zone is given. */
  processAt: (t: Date | number, zone?: GoZone): string => `ProcessAt(${goUnixDate(t, zone)})`,
  /** `ProcessIn(<Go duration>)`. */
  processIn: (ms: number): string => `ProcessIn(${goDuration(ms)})`,
  /** `Retention(<Go duration>)`. */
  retention: (ms: number): string => `Retention(${goDuration(ms)})`,
  /** `Group("name")`. */
  group: (name: string): string => `Group(${goQuote(name)})`,
  /** `Header(["key","value"])`. */
  header: (key: string, value: string): string => `Header(${goJson([key, value])})`
} as const

/** An option read back from its string form. */
export type ParsedOption =
  | { readonly kind: "maxRetry"; readonly value: number }
  | { readonly kind: "queue" | "taskId" | "group"; readonly value: string }
  | { readonly kind: "timeout" | "unique" | "processIn" | "retention"; readonly ms: number }
  | { readonly kind: "deadline" | "processAt"; readonly date: Date; readonly zone: string }
  | { readonly kind: "header"; readonly key: string; readonly value: string }

const durationKinds = { Timeout: "timeout", Unique: "unique", ProcessIn: "processIn", Retention: "retention" } as const
const stringKinds = { Queue: "queue", TaskID: "taskId", Group: "group" } as const
const timeKinds = { Deadline: "deadline", ProcessAt: "processAt" } as const

/**
 * Parses one option string (as Go or `optionString` wrote it). Throws on a malformed or unknown
 * option. `zones` gives offsets (seconds) for time-zone abbreviations other than UTC/GMT/numeric.
 */
export const parseOptionString = (text: string, zones?: Readonly<Record<string, number>>): ParsedOption => {
  const m = /^([A-Za-z]+)\((.*)\)$/s.exec(text.trim())
  if (!m) throw new Error(`not an asynq option string: ${JSON.stringify(text)}`)
  const name = m[1]!
  const arg = m[2]!
  if (name === "MaxRetry") {
    if (!/^-?\d+$/.test(arg)) throw new Error(`bad MaxRetry count in ${JSON.stringify(text)}`)
    return { kind: "maxRetry", value: Math.max(0, Number(arg)) }
  }
  if (name in durationKinds)
    return { kind: durationKinds[name as keyof typeof durationKinds], ms: parseGoDuration(arg) }
  if (name in stringKinds) return { kind: stringKinds[name as keyof typeof stringKinds], value: goUnquote(arg) }
  if (name in timeKinds) {
    const t = parseGoUnixDate(arg, zones)
    return { kind: timeKinds[name as keyof typeof timeKinds], date: t.date, zone: t.zone }
  }
  if (name === "Header") {
    const kv: unknown = JSON.parse(arg)
    if (!Array.isArray(kv) || kv.length !== 2 || !kv.every((x) => typeof x === "string"))
      throw new Error(`bad Header in ${JSON.stringify(text)}`)
    return { kind: "header", key: kv[0], value: kv[1] }
  }
  throw new Error(`unknown asynq option ${name} in ${JSON.stringify(text)}`)
}

/** Options in the shape of the enqueue options (queue, maxRetry, timeout ms, deadline Date, …). */
export interface OptionsFromStrings {
  queue?: string
  maxRetry?: number
  taskId?: string
  timeout?: number
  deadline?: Date
  unique?: number
  processAt?: Date
  processIn?: number
  retention?: number
  group?: string
  headers?: Record<string, string>
}

/** Reads a SchedulerEntry's enqueue_options into one options object; later options win, as in asynq. */
export const optionsFromStrings = (
  texts: ReadonlyArray<string>,
  zones?: Readonly<Record<string, number>>
): OptionsFromStrings => {
  const o: OptionsFromStrings = {}
  for (const t of texts) {
    const p = parseOptionString(t, zones)
    switch (p.kind) {
      case "maxRetry":
        o.maxRetry = p.value
        break
      case "queue":
        o.queue = p.value
        break
      case "taskId":
        o.taskId = p.value
        break
      case "group":
        o.group = p.value
        break
      case "timeout":
        o.timeout = p.ms
        break
      case "unique":
        o.unique = p.ms
        break
      case "processIn":
        o.processIn = p.ms
        break
      case "retention":
        o.retention = p.ms
        break
      case "deadline":
        o.deadline = p.date
        break
      case "processAt":
        o.processAt = p.date
        break
      case "header":
        o.headers = { ...o.headers, [p.key]: p.value }
        break
    }
  }
  return o
}
