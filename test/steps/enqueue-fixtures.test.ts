/**
 * Reproduces asynq's own Redis snapshots (test/fixtures/asynq-wire/states a–d) with our
 * enqueue: the same keys, key types, hash fields, list/zset/set contents, scores, TTL presence,
 * and protobuf messages. The TestClock is set to the capture time, so scores match exactly;
 * random ids (asynq's uuid, our 13-character id) are compared as "<random>".
 */
import { expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { describe } from "vitest"
import type { Broker } from "../../src/broker/Broker.js"
import { enqueue } from "../../src/steps/enqueue.js"
import { decodeTaskMessage, type TaskMessage } from "../../src/wire/TaskMessage.js"
import { testBrokerLayer, zsetOf, stepsTestDb } from "../support/arrange.js"
import { loadFixture } from "../support/fixtures.js"

interface KeyDump {
  readonly type: string
  readonly value: unknown
  readonly ttl_ms: number
}
interface StateFixture {
  readonly now_unix: number
  readonly keys: Record<string, KeyDump>
}

const c = stepsTestDb()

/** Every key of the DB in the fixture format (hash fields sorted, msg as base64). */
const snapshot = async (): Promise<Record<string, KeyDump>> => {
  const out: Record<string, KeyDump> = {}
  for (const key of (await c.keys("*")).sort()) {
    const type = await c.type(key)
    const ttl_ms = await c.pttl(key)
    let value: unknown
    if (type === "hash") {
      const raw = await c.hgetallBuffer(key)
      const h: Record<string, string> = {}
      for (const f of Object.keys(raw).sort()) h[f] = f === "msg" ? raw[f]!.toString("base64") : raw[f]!.toString()
      value = h
    } else if (type === "list") value = await c.lrange(key, 0, -1)
    else if (type === "set") value = (await c.smembers(key)).sort()
    else if (type === "zset") value = await zsetOf(c, key)
    else value = await c.get(key)
    out[key] = { type, value, ttl_ms }
  }
  return out
}

/** The fixture's annotated message as our TaskMessage. */
const fixtureMsg = (d: Record<string, unknown>): TaskMessage => ({
  type: d.type as string,
  payload:
    d.payload === null || d.payload === "" ? undefined : new Uint8Array(Buffer.from(d.payload as string, "base64")),
  id: d.id as string,
  queue: d.queue as string,
  retry: d.retry as number,
  retried: d.retried as number,
  errorMsg: d.error_msg as string,
  timeout: Number(d.timeout),
  deadline: Number(d.deadline),
  uniqueKey: d.unique_key as string,
  lastFailedAt: Number(d.last_failed_at),
  retention: Number(d.retention),
  completedAt: Number(d.completed_at),
  groupKey: d.group_key as string,
  headers: d.headers as Record<string, string>
})

/** Replaces ids that are not in `known` by "<random>" in key names, members and values. */
const normalize = (keys: Record<string, KeyDump>, known: ReadonlySet<string>) => {
  const random = new Set<string>()
  for (const k of Object.keys(keys)) {
    const m = /^asynq:\{[^}]*\}:t:(.+)$/.exec(k)
    if (m && !known.has(m[1]!)) random.add(m[1]!)
  }
  const id = (s: string) => (random.has(s) ? "<random>" : s)
  const out: Record<string, KeyDump> = {}
  const original: Record<string, string> = {}
  for (const [k, d] of Object.entries(keys)) {
    const name = k.replace(/:t:(.+)$/, (_, x: string) => `:t:${id(x)}`)
    original[name] = k
    let value = d.value
    if (d.type === "list" || d.type === "set") value = (d.value as Array<string>).map(id)
    else if (d.type === "zset") value = (d.value as Array<[string, number]>).map(([m, s]) => [id(m), s])
    else if (d.type === "string") value = id(d.value as string)
    else if (d.type === "hash")
      value = Object.fromEntries(
        Object.entries(d.value as Record<string, unknown>).filter(([f]) => !f.endsWith("_decoded"))
      )
    out[name] = { ...d, value }
  }
  return { keys: out, random, original }
}

/** Checks our snapshot against the fixture, key by key. */
const compare = (fixture: StateFixture, ours: Record<string, KeyDump>, known: ReadonlySet<string>) => {
  const f = normalize(fixture.keys, known)
  const o = normalize(ours, known)
  expect(Object.keys(o.keys).sort()).toEqual(Object.keys(f.keys).sort())
  for (const [key, fk] of Object.entries(f.keys)) {
    const ok = o.keys[key]!
    expect({ key, type: ok.type }).toEqual({ key, type: fk.type })
    expect({ key, expires: ok.ttl_ms > 0 }).toEqual({ key, expires: fk.ttl_ms > 0 })
    if (fk.ttl_ms > 0) expect(Math.abs(ok.ttl_ms - fk.ttl_ms), `TTL of ${key}`).toBeLessThan(5000)
    if (fk.type !== "hash") {
      expect({ key, value: ok.value }).toEqual({ key, value: fk.value })
      continue
    }
    const fh = fk.value as Record<string, string>
    const oh = ok.value as Record<string, string>
    expect({ key, fields: Object.keys(oh).sort() }).toEqual({ key, fields: Object.keys(fh).sort() })
    for (const field of Object.keys(fh)) {
      if (field === "msg") continue
      if (field === "pending_since") {
        expect(oh[field], key).toMatch(/^\d{19}$/)
        expect(
          Math.abs(Number(BigInt(oh[field]!) - BigInt(fh[field]!)) / 1e9),
          `pending_since of ${key} (s)`
        ).toBeLessThan(1)
      } else expect({ key, field, value: oh[field] }).toEqual({ key, field, value: fh[field] })
    }
    const annotated = fixture.keys[f.original[key]!]!.value as { readonly msg_decoded: Record<string, unknown> }
    const theirs = fixtureMsg(annotated.msg_decoded)
    const mine = decodeTaskMessage(new Uint8Array(Buffer.from(oh.msg!, "base64")))
    const isRandom = o.random.has(mine.id)
    expect({ ...mine, id: isRandom ? "<random>" : mine.id }).toEqual({
      ...theirs,
      id: f.random.has(theirs.id) ? "<random>" : theirs.id
    })
    // Same bytes as Go wrote, where the id is ours to choose and no map field has 2+ entries (Go's map order is random).
    if (!isRandom && Object.keys(theirs.headers).length < 2) expect({ key, msg: oh.msg }).toEqual({ key, msg: fh.msg })
  }
}

const fresh = <A, E>(eff: Effect.Effect<A, E, Broker>) =>
  Effect.gen(function* () {
    yield* Effect.promise(() => c.flushdb())
    return yield* eff.pipe(Effect.provide(Layer.fresh(testBrokerLayer())))
  })

describe("asynq's Redis layout, reproduced (states a–d)", () => {
  it.effect("a-enqueue: pending tasks with default and explicit options, headers, two queues", () =>
    Effect.gen(function* () {
      const fx = loadFixture<StateFixture>("states/a-enqueue.json")
      yield* TestClock.setTime(fx.now_unix * 1000)
      yield* fresh(
        Effect.gen(function* () {
          yield* enqueue("email:send", `{"to":"alice@example.com"}`, {
            taskId: "a-email-1",
            maxRetry: 5,
            timeout: 120_000,
            headers: { "trace-id": "t-123" }
          })
          yield* enqueue("image:resize", `{"src":"s3://bucket/img.png","w":640}`, {
            queue: "critical",
            taskId: "a-resize-2",
            deadline: new Date("2030-01-01T00:00:00Z"),
            retention: 24 * 3_600_000,
            headers: { tenant: "acme", priority: "high" }
          })
          yield* enqueue("cleanup", undefined)
        })
      )
      compare(fx, yield* Effect.promise(snapshot), new Set(["a-email-1", "a-resize-2"]))
    })
  )

  it.effect("b-scheduled: processIn and processAt, scores in unix seconds", () =>
    Effect.gen(function* () {
      const fx = loadFixture<StateFixture>("states/b-scheduled.json")
      yield* TestClock.setTime(fx.now_unix * 1000)
      yield* fresh(
        Effect.gen(function* () {
          yield* enqueue("reminder:send", `{"user":42}`, { taskId: "b-reminder", processIn: 10 * 60_000 })
          yield* enqueue("report:monthly", `{"month":"2029-12"}`, {
            taskId: "b-at",
            queue: "low",
            processAt: new Date("2030-01-01T00:00:00Z")
          })
        })
      )
      compare(fx, yield* Effect.promise(snapshot), new Set(["b-reminder", "b-at"]))
    })
  )

  it.effect(
    "c-unique: locks with TTLs (from process-at for the scheduled one), duplicate writes nothing, nil-payload key",
    () =>
      Effect.gen(function* () {
        const fx = loadFixture<StateFixture>("states/c-unique.json")
        yield* TestClock.setTime(fx.now_unix * 1000)
        yield* fresh(
          Effect.gen(function* () {
            yield* enqueue("report:daily", `{"date":"2024-01-01"}`, { taskId: "c-unique", unique: 3_600_000 })
            const dup = yield* enqueue("report:daily", `{"date":"2024-01-01"}`, {
              taskId: "c-unique-dup",
              unique: 3_600_000
            }).pipe(Effect.flip)
            expect(dup._tag).toBe("DuplicateTask")
            yield* enqueue("sync:all", undefined, { taskId: "c-unique-nil", unique: 30 * 60_000 })
            yield* enqueue("report:weekly", "{}", {
              taskId: "c-unique-scheduled",
              unique: 2 * 3_600_000,
              processIn: 3_600_000
            })
          })
        )
        compare(fx, yield* Effect.promise(snapshot), new Set(["c-unique", "c-unique-nil", "c-unique-scheduled"]))
      })
  )

  it.effect(
    "d-group: aggregating tasks, group zsets scored by add time, groups set, group+unique without a unique_key field",
    () =>
      Effect.gen(function* () {
        const fx = loadFixture<StateFixture>("states/d-group.json")
        const scores = Object.fromEntries([
          ...(fx.keys["asynq:{default}:g:g1"]!.value as Array<[string, number]>),
          ...(fx.keys["asynq:{default}:g:g2"]!.value as Array<[string, number]>)
        ])
        yield* fresh(
          Effect.gen(function* () {
            for (const i of [1, 2, 3]) {
              yield* TestClock.setTime(scores[`d-g1-${i}`]! * 1000)
              yield* enqueue("notify:batch", `{"n":${i}}`, { taskId: `d-g1-${i}`, group: "g1" })
            }
            yield* TestClock.setTime(scores["d-g2-unique"]! * 1000)
            yield* enqueue("notify:batch", `{"n":9}`, { taskId: "d-g2-unique", group: "g2", unique: 3_600_000 })
          })
        )
        compare(fx, yield* Effect.promise(snapshot), new Set(["d-g1-1", "d-g1-2", "d-g1-3", "d-g2-unique"]))
      })
  )
})
