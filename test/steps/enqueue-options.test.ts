import { expect, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { describe, it } from "vitest"
import { enqueue } from "../../src/steps/enqueue.js"
import { type EnqueueOptions, maxDurationMs, maxInstantMs, resolveEnqueueOptions } from "../../src/steps/options.js"
import { queueKeys } from "../../src/wire/keys.js"
import { io, readTask, testBrokerLayer, stepsTestDb } from "../support/arrange.js"

const c = stepsTestDb()

const now = 1_795_324_734_000
const resolve = (opts: EnqueueOptions | undefined, type = "t") => resolveEnqueueOptions(type, opts, now)

describe("enqueue option defaults and conversions (asynq's)", () => {
  it("no options: queue default, maxRetry 25, timeout 1800 s, nothing else", () => {
    expect(Result.getOrThrow(resolve(undefined))).toEqual({
      queue: "default",
      maxRetry: 25,
      timeoutSec: 1800,
      deadlineSec: 0,
      uniqueMs: undefined,
      processAtMs: undefined,
      taskId: undefined,
      retentionSec: 0,
      group: undefined,
      headers: {}
    })
  })
  it("deadline alone: timeout 0; timeout and deadline: both kept", () => {
    expect(Result.getOrThrow(resolve({ deadline: new Date(1_893_456_000_000) }))).toMatchObject({
      timeoutSec: 0,
      deadlineSec: 1893456000
    })
    expect(Result.getOrThrow(resolve({ deadline: 1_893_456_000_000, timeout: 60_000 }))).toMatchObject({
      timeoutSec: 60,
      deadlineSec: 1893456000
    })
  })
  it("processIn is counted from now; a due time not after now means pending (no processAtMs)", () => {
    expect(Result.getOrThrow(resolve({ processIn: 1 })).processAtMs).toBe(now + 1)
    expect(Result.getOrThrow(resolve({ processAt: now })).processAtMs).toBeUndefined()
    expect(Result.getOrThrow(resolve({ processAt: new Date(now + 5000) })).processAtMs).toBe(now + 5000)
  })
  it("undefined option values count as absent", () => {
    expect(Result.getOrThrow(resolve({ queue: undefined, maxRetry: undefined, unique: undefined }))).toMatchObject({
      queue: "default",
      maxRetry: 25,
      uniqueMs: undefined
    })
  })
  it("headers are copied (later changes to the caller's object do not leak in)", () => {
    const h: Record<string, string> = { a: "1" }
    const r = Result.getOrThrow(resolve({ headers: h }))
    h.b = "2"
    expect(r.headers).toEqual({ a: "1" })
  })
})

const durationLimit =
  "9223372036000 ms (about 292 years: asynq stores it as whole seconds and reads it as a Go time.Duration)"
const instantLimit = "9999-12-31T23:59:59.999Z (unix ms 253402300799999; dates run from 1970 to the year 9999)"
const loneSurrogate = "UTF-8 cannot encode it, so it would be stored altered"

describe("enqueue option bounds: the limits themselves are accepted", () => {
  it("durations up to 9223372036000 ms (whole seconds fit a Go time.Duration), dates up to the end of year 9999", () => {
    expect(maxDurationMs).toBe(9_223_372_036_000)
    expect(maxInstantMs).toBe(Date.UTC(9999, 11, 31, 23, 59, 59, 999))
    expect(
      Result.getOrThrow(resolve({ timeout: maxDurationMs, retention: maxDurationMs, unique: maxDurationMs }))
    ).toMatchObject({
      timeoutSec: 9_223_372_036,
      retentionSec: 9_223_372_036,
      uniqueMs: maxDurationMs
    })
    expect(Result.getOrThrow(resolve({ processIn: maxDurationMs })).processAtMs).toBe(now + maxDurationMs)
    expect(Result.getOrThrow(resolve({ processAt: new Date(maxInstantMs), deadline: maxInstantMs }))).toMatchObject({
      processAtMs: maxInstantMs,
      deadlineSec: 253_402_300_799
    })
  })
})

// Each case: options (as a JS caller might pass them), the field at fault, the exact message.
const invalidCases: ReadonlyArray<readonly [string, unknown, string, string]> = [
  ["empty queue", { queue: "" }, "queue", `queue name must be a non-empty string (not only whitespace), got ""`],
  [
    "whitespace queue",
    { queue: "  " },
    "queue",
    `queue name must be a non-empty string (not only whitespace), got "  "`
  ],
  ["non-string queue", { queue: 5 }, "queue", "queue name must be a non-empty string (not only whitespace), got 5"],
  ["long queue", { queue: "q".repeat(256) }, "queue", "queue name is 256 characters long; at most 255 are allowed"],
  [
    "queue with braces",
    { queue: "a}b" },
    "queue",
    `queue name "a}b" contains '{' or '}', which would break the Redis Cluster hash tag of its keys`
  ],
  ["negative maxRetry", { maxRetry: -1 }, "maxRetry", "maxRetry must be a whole number from 0 to 2147483647, got -1"],
  [
    "fractional maxRetry",
    { maxRetry: 1.5 },
    "maxRetry",
    "maxRetry must be a whole number from 0 to 2147483647, got 1.5"
  ],
  [
    "huge maxRetry",
    { maxRetry: 2 ** 31 },
    "maxRetry",
    "maxRetry must be a whole number from 0 to 2147483647, got 2147483648"
  ],
  ["negative timeout", { timeout: -1 }, "timeout", "timeout must be a finite number of milliseconds >= 0, got -1"],
  ["NaN timeout", { timeout: Number.NaN }, "timeout", "timeout must be a finite number of milliseconds >= 0, got NaN"],
  [
    "infinite timeout",
    { timeout: Number.POSITIVE_INFINITY },
    "timeout",
    "timeout must be a finite number of milliseconds >= 0, got Infinity"
  ],
  ["string timeout", { timeout: "30s" }, "timeout", `timeout must be a finite number of milliseconds >= 0, got "30s"`],
  [
    "invalid Date deadline",
    { deadline: new Date("nope") },
    "deadline",
    "deadline must be a valid Date or a unix time in milliseconds >= 0, got Invalid Date"
  ],
  [
    "negative deadline",
    { deadline: -5 },
    "deadline",
    "deadline must be a valid Date or a unix time in milliseconds >= 0, got -5"
  ],
  ["unique under 1 s", { unique: 999 }, "unique", "unique must be a finite number of milliseconds >= 1000, got 999"],
  [
    "infinite unique",
    { unique: Number.POSITIVE_INFINITY },
    "unique",
    "unique must be a finite number of milliseconds >= 1000, got Infinity"
  ],
  [
    "processAt and processIn",
    { processAt: now + 1000, processIn: 1000 },
    "processAt",
    "give either processAt or processIn, not both"
  ],
  [
    "negative processIn",
    { processIn: -1 },
    "processIn",
    "processIn must be a finite number of milliseconds >= 0, got -1"
  ],
  [
    "invalid processAt",
    { processAt: "tomorrow" },
    "processAt",
    `processAt must be a valid Date or a unix time in milliseconds >= 0, got "tomorrow"`
  ],
  ["blank taskId", { taskId: " " }, "taskId", `taskId must be a non-empty string (not only whitespace), got " "`],
  [
    "negative retention",
    { retention: -1000 },
    "retention",
    "retention must be a finite number of milliseconds >= 0, got -1000"
  ],
  ["empty group", { group: "" }, "group", `group name must be a non-empty string (not only whitespace), got ""`],
  ["headers not an object", { headers: "x" }, "headers", `headers must be an object of string values, got "x"`],
  ["non-string header", { headers: { a: "1", n: 2 } }, "headers", `header "n" must be a string, got number`],
  [
    "unknown option",
    { retries: 3 },
    "retries",
    `unknown enqueue option "retries"; known options: queue, maxRetry, timeout, deadline, unique, processAt, processIn, taskId, retention, group, headers, limitKey`
  ],
  ["options not an object", "critical", "options", `enqueue options must be an object, got "critical"`],
  // Bounds (issue 13, point 7): what asynq can store (int64 seconds) and run, and dates within years 1970..9999.
  ["absurd timeout", { timeout: 1e300 }, "timeout", `timeout must be at most ${durationLimit}, got 1e+300`],
  [
    "timeout 1 ms over the limit",
    { timeout: 9_223_372_036_001 },
    "timeout",
    `timeout must be at most ${durationLimit}, got 9223372036001`
  ],
  ["absurd unique", { unique: 1e300 }, "unique", `unique must be at most ${durationLimit}, got 1e+300`],
  ["absurd processIn", { processIn: 1e300 }, "processIn", `processIn must be at most ${durationLimit}, got 1e+300`],
  ["absurd retention", { retention: 1e300 }, "retention", `retention must be at most ${durationLimit}, got 1e+300`],
  ["absurd processAt", { processAt: 1e300 }, "processAt", `processAt must be at most ${instantLimit}, got 1e+300`],
  [
    "processAt in year 10000",
    { processAt: new Date("+010000-01-01T00:00:00.000Z") },
    "processAt",
    `processAt must be at most ${instantLimit}, got +010000-01-01T00:00:00.000Z`
  ],
  ["absurd deadline", { deadline: 1e300 }, "deadline", `deadline must be at most ${instantLimit}, got 1e+300`],
  [
    "deadline 1 ms after year 9999",
    { deadline: 253_402_300_800_000 },
    "deadline",
    `deadline must be at most ${instantLimit}, got 253402300800000`
  ],
  [
    "queue with a lone high surrogate",
    { queue: "q\uD800" },
    "queue",
    `queue name "q\\ud800" contains a lone UTF-16 surrogate at index 1 (${loneSurrogate})`
  ],
  [
    "taskId with a lone low surrogate",
    { taskId: "\uDC00id" },
    "taskId",
    `taskId "\\udc00id" contains a lone UTF-16 surrogate at index 0 (${loneSurrogate})`
  ],
  [
    "group with a reversed pair",
    { group: "g\uDE00\uD83D" },
    "group",
    `group name "g\\ude00\\ud83d" contains a lone UTF-16 surrogate at index 1 (${loneSurrogate})`
  ],
  [
    "header name with a lone surrogate",
    { headers: { ok: "1", "\uD83D": "v" } },
    "headers",
    `header name "\\ud83d" contains a lone UTF-16 surrogate at index 0 (${loneSurrogate})`
  ],
  [
    "header value with a lone surrogate",
    { headers: { k: "smile \uD83D" } },
    "headers",
    `header "k" value "smile \\ud83d" contains a lone UTF-16 surrogate at index 6 (${loneSurrogate})`
  ]
]

layer(testBrokerLayer())("invalid enqueue options (real Redis: nothing is written)", (it) => {
  for (const [name, opts, field, message] of invalidCases) {
    it.effect(`${name} → InvalidArgument(${field})`, () =>
      Effect.gen(function* () {
        const e = yield* enqueue("t", "p", opts as EnqueueOptions).pipe(Effect.flip)
        expect(e._tag).toBe("InvalidArgument")
        expect(e).toMatchObject({ field, message })
        expect(yield* Effect.promise(() => c.dbsize())).toBe(0)
      })
    )
  }

  it.effect("an empty or whitespace-only task type is rejected", () =>
    Effect.gen(function* () {
      for (const type of ["", "  "]) {
        const e = yield* enqueue(type, "p").pipe(Effect.flip)
        expect(e).toMatchObject({
          _tag: "InvalidArgument",
          field: "type",
          message: `task type must be a non-empty string (not only whitespace), got ${JSON.stringify(type)}`
        })
      }
      expect(yield* Effect.promise(() => c.dbsize())).toBe(0)
    })
  )

  it.effect("a task type with a lone surrogate is rejected", () =>
    Effect.gen(function* () {
      const e = yield* enqueue("email:\uD800send", "p").pipe(Effect.flip)
      expect(e).toMatchObject({
        _tag: "InvalidArgument",
        field: "type",
        message: `task type "email:\\ud800send" contains a lone UTF-16 surrogate at index 6 (${loneSurrogate})`
      })
      expect(yield* Effect.promise(() => c.dbsize())).toBe(0)
    })
  )

  it.effect("a payload with no JSON form is rejected as InvalidArgument(payload), not sent as nothing", () =>
    Effect.gen(function* () {
      const cyclic: Record<string, unknown> = {}
      cyclic.self = cyclic
      for (const p of [() => 1, Symbol("s"), 10n, cyclic]) {
        const e = yield* enqueue("t", p).pipe(Effect.flip)
        expect(e._tag).toBe("InvalidArgument")
        expect(e).toMatchObject({ field: "payload" })
        expect(e.message).toMatch(/^payload (of type \w+ has no JSON form|cannot be serialized as JSON)/)
      }
      expect(yield* Effect.promise(() => c.dbsize())).toBe(0)
    })
  )
})

layer(testBrokerLayer())("values at the limits and well-formed strings (real Redis)", (it) => {
  it.effect("a task at every limit is written as asked (no Redis error, the message holds the exact seconds)", () =>
    Effect.gen(function* () {
      const info = yield* enqueue("t", "at-limit", {
        queue: "limits",
        timeout: maxDurationMs,
        retention: maxDurationMs,
        unique: maxDurationMs,
        processAt: maxInstantMs,
        deadline: new Date(maxInstantMs)
      })
      expect(info.state).toBe("scheduled")
      const { msg } = yield* io(() => readTask(c, "limits", info.id))
      expect(msg).toMatchObject({ timeout: 9_223_372_036, retention: 9_223_372_036, deadline: 253_402_300_799 })
      // Whole seconds rounded up (a Go server never runs it early); the exact time in due_ms.
      expect(yield* io(() => c.zscore(queueKeys("limits").scheduled, info.id))).toBe("253402300800")
      expect(yield* io(() => c.zscore(queueKeys("limits").dueMs, info.id))).toBe(String(maxInstantMs))
      expect(yield* io(() => c.pttl(msg!.uniqueKey))).toBeGreaterThan(maxDurationMs)
    })
  )

  it.effect("well-formed surrogate pairs (emoji) are accepted and stored unaltered", () =>
    Effect.gen(function* () {
      const info = yield* enqueue("t😀", "p", { queue: "q😀", taskId: "id😀", headers: { "k😀": "v😀" } })
      expect(yield* io(() => c.lrange(queueKeys("q😀").pending, 0, -1))).toEqual(["id😀"])
      const { msg } = yield* io(() => readTask(c, "q😀", info.id))
      expect(msg).toMatchObject({ type: "t😀", queue: "q😀", id: "id😀", headers: { "k😀": "v😀" } })
    })
  )
})
