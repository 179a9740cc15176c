import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { Broker } from "../../src/broker/Broker.js"
import { enqueue, enqueueManyUntraced, enqueueMessage, enqueueUntraced } from "../../src/steps/enqueue.js"
import { queueKeys } from "../../src/wire/keys.js"
import { payloadJson } from "../../src/wire/payload.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import {
  baseNowMs,
  makeMsg,
  readTask,
  testBrokerLayer,
  zsetOf,
  stepsTestDb,
  io,
  baseNowSec as nowSec
} from "../support/arrange.js"

const c = stepsTestDb()
const ns = (ms: number) => String(BigInt(ms) * 1_000_000n)
const utf8 = (s: string) => new TextEncoder().encode(s)

layer(testBrokerLayer())("enqueue (real Redis)", (it) => {
  it.effect(
    "with no options: pending in 'default', asynq's defaults, hash msg/state/pending_since, LPUSH, queue registered",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const info = yield* enqueue("email:deliver", { userId: 42 })
        expect(info).toMatchObject({
          queue: "default",
          type: "email:deliver",
          state: "pending",
          maxRetry: 25,
          retried: 0,
          timeoutMs: 1_800_000
        })
        expect(info.deadline).toBeUndefined()
        expect(info.nextProcessAt).toEqual(new Date(baseNowMs))
        expect(info.id).toMatch(/^[0-9A-Za-z]{13}$/)
        expect(payloadJson(info.payload)).toEqual({ userId: 42 })
        const t = yield* io(() => readTask(c, "default", info.id))
        expect(t.fields).toEqual({ state: "pending", pending_since: ns(baseNowMs) })
        expect(t.msg).toMatchObject({
          id: info.id,
          queue: "default",
          type: "email:deliver",
          retry: 25,
          timeout: 1800,
          deadline: 0,
          retention: 0,
          uniqueKey: "",
          groupKey: ""
        })
        expect(yield* io(() => c.lrange(queueKeys("default").pending, 0, -1))).toEqual([info.id])
        expect(yield* io(() => c.smembers("asynq:queues"))).toContain("default")
        expect(yield* io(() => c.ttl(queueKeys("default").task(info.id)))).toBe(-1)
      })
  )

  it.effect("pending list is LPUSH order: the newest task at the head", () =>
    Effect.gen(function* () {
      const a = yield* enqueue("t", "a", { queue: "order" })
      const b = yield* enqueue("t", "b", { queue: "order" })
      expect(yield* io(() => c.lrange(queueKeys("order").pending, 0, -1))).toEqual([b.id, a.id])
    })
  )

  it.effect("every message option lands in the protobuf message", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const deadline = new Date("2030-01-01T00:00:00Z")
      const info = yield* enqueue("image:resize", utf8("raw"), {
        queue: "opts",
        maxRetry: 5,
        timeout: 120_000,
        deadline,
        taskId: "custom-1",
        retention: 86_400_000,
        headers: { tenant: "acme", priority: "high" }
      })
      expect(info).toMatchObject({
        id: "custom-1",
        queue: "opts",
        maxRetry: 5,
        timeoutMs: 120_000,
        retentionMs: 86_400_000,
        deadline,
        headers: { tenant: "acme", priority: "high" }
      })
      const t = yield* io(() => readTask(c, "opts", "custom-1"))
      expect(t.msg).toMatchObject({
        retry: 5,
        timeout: 120,
        deadline: 1893456000,
        retention: 86400,
        headers: { priority: "high", tenant: "acme" }
      })
      expect(new TextDecoder().decode(t.msg!.payload)).toBe("raw")
    })
  )

  it.effect(
    "deadline alone means no timeout (0); a unix-ms number works like a Date; sub-second timeout/retention round up",
    () =>
      Effect.gen(function* () {
        const a = yield* enqueue("t", undefined, { queue: "dl", deadline: 1_893_456_000_500 })
        expect((yield* io(() => readTask(c, "dl", a.id))).msg).toMatchObject({
          timeout: 0,
          deadline: 1893456000,
          payload: undefined
        })
        const b = yield* enqueue("t", undefined, { queue: "dl", timeout: 1500, retention: 1 })
        expect((yield* io(() => readTask(c, "dl", b.id))).msg).toMatchObject({ timeout: 2, retention: 1 })
        const z = yield* enqueue("t", undefined, { queue: "dl", timeout: 0 })
        expect((yield* io(() => readTask(c, "dl", z.id))).msg!.timeout).toBe(1800)
        const r = yield* enqueue("t", undefined, { queue: "dl", maxRetry: 0 })
        expect((yield* io(() => readTask(c, "dl", r.id))).msg!.retry).toBe(0)
      })
  )

  it.effect(
    "processIn / processAt: scheduled zset scored in whole unix seconds rounded up (never early for Go), the exact ms in due_ms; no pending_since",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs + 250)
        const a = yield* enqueue("reminder", { u: 1 }, { queue: "sched", processIn: 600_000, taskId: "in-10m" })
        expect(a.state).toBe("scheduled")
        expect(a.nextProcessAt).toEqual(new Date(baseNowMs + 250 + 600_000))
        const at = new Date("2030-01-01T00:00:00Z")
        const b = yield* enqueue("report", { m: 12 }, { queue: "sched", processAt: at, taskId: "at-2030" })
        expect(b.nextProcessAt).toEqual(at)
        expect(yield* io(() => zsetOf(c, queueKeys("sched").scheduled))).toEqual([
          ["in-10m", nowSec + 601],
          ["at-2030", 1893456000]
        ])
        // Only the due time with a sub-second part has an exact entry.
        expect(yield* io(() => zsetOf(c, queueKeys("sched").dueMs))).toEqual([["in-10m", baseNowMs + 250 + 600_000]])
        expect((yield* io(() => readTask(c, "sched", "in-10m"))).fields).toEqual({ state: "scheduled" })
        expect(yield* io(() => c.exists(queueKeys("sched").pending))).toBe(0)
        expect(yield* io(() => c.smembers("asynq:queues"))).toContain("sched")
      })
  )

  it.effect("processAt now or in the past, and processIn 0, enqueue as pending", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const past = yield* enqueue("t", undefined, { queue: "due", processAt: baseNowMs - 60_000 })
      const now = yield* enqueue("t", undefined, { queue: "due", processAt: new Date(baseNowMs) })
      const zero = yield* enqueue("t", undefined, { queue: "due", processIn: 0 })
      expect([past.state, now.state, zero.state]).toEqual(["pending", "pending", "pending"])
      expect(yield* io(() => c.llen(queueKeys("due").pending))).toBe(3)
      expect(yield* io(() => c.exists(queueKeys("due").scheduled))).toBe(0)
    })
  )

  it.effect("group: aggregating, g:<group> zset scored now (unix s), groups set, hash field group, msg.group_key", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const a = yield* enqueue("notify", { n: 1 }, { queue: "grp", group: "g1", taskId: "g-1" })
      yield* TestClock.adjust("1 second")
      yield* enqueue("notify", { n: 2 }, { queue: "grp", group: "g1", taskId: "g-2" })
      expect(a.state).toBe("aggregating")
      expect(a.group).toBe("g1")
      expect(a.nextProcessAt).toBeUndefined()
      const k = queueKeys("grp")
      expect(yield* io(() => zsetOf(c, k.group("g1")))).toEqual([
        ["g-1", nowSec],
        ["g-2", nowSec + 1]
      ])
      expect(yield* io(() => c.smembers(k.allGroups))).toEqual(["g1"])
      const t = yield* io(() => readTask(c, "grp", "g-1"))
      expect(t.fields).toEqual({ state: "aggregating", group: "g1" })
      expect(t.msg!.groupKey).toBe("g1")
    })
  )

  it.effect("group with a future processAt is scheduled (as asynq), keeping group_key in the message", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const info = yield* enqueue("notify", undefined, { queue: "grp2", group: "g", processIn: 5000, taskId: "gs" })
      expect(info.state).toBe("scheduled")
      expect((yield* io(() => readTask(c, "grp2", "gs"))).msg!.groupKey).toBe("g")
      expect(yield* io(() => zsetOf(c, queueKeys("grp2").scheduled))).toEqual([["gs", nowSec + 5]])
      expect(yield* io(() => c.exists(queueKeys("grp2").group("g")))).toBe(0)
    })
  )

  it.effect(
    "unique: lock key = asynq's key, value = task id, TTL = unique TTL; hash and msg carry unique_key; a duplicate writes nothing",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const payload = { date: "2024-01-01" }
        const info = yield* enqueue("report:daily", payload, { queue: "uq", unique: 3_600_000, taskId: "u-1" })
        const lock = uniqueKey("uq", "report:daily", utf8(JSON.stringify(payload)))
        expect(lock).toBe("asynq:{uq}:unique:report:daily:840719c4838e90f86d01aa98a557f82d")
        expect(yield* io(() => c.get(lock))).toBe("u-1")
        const pttl = yield* io(() => c.pttl(lock))
        expect(pttl).toBeGreaterThan(3_590_000)
        expect(pttl).toBeLessThanOrEqual(3_600_000)
        const t = yield* io(() => readTask(c, "uq", "u-1"))
        expect(t.fields).toEqual({ state: "pending", pending_since: ns(baseNowMs), unique_key: lock })
        expect(t.msg!.uniqueKey).toBe(lock)
        expect(info.state).toBe("pending")

        const dup = yield* enqueue("report:daily", payload, { queue: "uq", unique: 3_600_000, taskId: "u-2" }).pipe(
          Effect.flip
        )
        expect(dup._tag).toBe("DuplicateTask")
        expect(dup).toMatchObject({ queue: "uq", type: "report:daily", uniqueKey: lock })
        expect(dup.message).toBe(
          `task already exists: a task of type "report:daily" with the same payload is still unique-locked in queue "uq" (lock ${lock})`
        )
        expect(yield* io(() => c.exists(queueKeys("uq").task("u-2")))).toBe(0)
        expect(yield* io(() => c.lrange(queueKeys("uq").pending, 0, -1))).toEqual(["u-1"])
        expect(yield* io(() => c.get(lock))).toBe("u-1")

        // another payload, type or queue is not a duplicate; a nil payload's key ends in ':'
        yield* enqueue("report:daily", { date: "2024-01-02" }, { queue: "uq", unique: 3_600_000 })
        yield* enqueue("report:daily", payload, { queue: "uq2", unique: 3_600_000 })
        const nil = yield* enqueue("sync:all", undefined, { queue: "uq", unique: 1000, taskId: "u-nil" })
        expect((yield* io(() => readTask(c, "uq", nil.id))).fields.unique_key).toBe("asynq:{uq}:unique:sync:all:")
      })
  )

  it.effect("unique + processIn: the lock lives (processAt - now) + unique TTL, as asynq", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* enqueue("report:weekly", {}, { queue: "uqs", unique: 2 * 3_600_000, processIn: 3_600_000, taskId: "us" })
      const lock = uniqueKey("uqs", "report:weekly", utf8("{}"))
      const pttl = yield* io(() => c.pttl(lock))
      expect(pttl).toBeGreaterThan(3 * 3_600_000 - 10_000)
      expect(pttl).toBeLessThanOrEqual(3 * 3_600_000)
      expect((yield* io(() => readTask(c, "uqs", "us"))).fields).toEqual({ state: "scheduled", unique_key: lock })
      const dup = yield* enqueue("report:weekly", {}, { queue: "uqs", unique: 1000 }).pipe(Effect.flip)
      expect(dup._tag).toBe("DuplicateTask")
    })
  )

  it.effect("group + unique: lock taken, msg.unique_key set, but no unique_key hash field (asynq's layout)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      yield* enqueue("notify:batch", { n: 9 }, { queue: "ugq", group: "g2", unique: 3_600_000, taskId: "ug" })
      const lock = uniqueKey("ugq", "notify:batch", utf8('{"n":9}'))
      expect(yield* io(() => c.get(lock))).toBe("ug")
      const t = yield* io(() => readTask(c, "ugq", "ug"))
      expect(t.fields).toEqual({ state: "aggregating", group: "g2" })
      expect(t.msg!.uniqueKey).toBe(lock)
      const dup = yield* enqueue("notify:batch", { n: 9 }, { queue: "ugq", group: "g2", unique: 3_600_000 }).pipe(
        Effect.flip
      )
      expect(dup._tag).toBe("DuplicateTask")
      expect(yield* io(() => c.zcard(queueKeys("ugq").group("g2")))).toBe(1)
    })
  )

  it.effect(
    "a custom task id that exists fails with TaskIdConflict and changes nothing (no lock left behind either)",
    () =>
      Effect.gen(function* () {
        yield* enqueue("t", "first", { queue: "idc", taskId: "same" })
        const before = yield* io(() => c.hgetallBuffer(queueKeys("idc").task("same")))
        for (const opts of [{}, { processIn: 60_000 }, { group: "g" }, { unique: 60_000 }] as const) {
          const e = yield* enqueue("t", "second", { queue: "idc", taskId: "same", ...opts }).pipe(Effect.flip)
          expect(e._tag).toBe("TaskIdConflict")
          expect(e.message).toBe(
            `task ID conflicts with another task: a task with id "same" already exists in queue "idc"`
          )
          expect(e).toMatchObject({ queue: "idc", id: "same" })
        }
        expect(yield* io(() => c.hgetallBuffer(queueKeys("idc").task("same")))).toEqual(before)
        expect(yield* io(() => c.lrange(queueKeys("idc").pending, 0, -1))).toEqual(["same"])
        expect(yield* io(() => c.exists(queueKeys("idc").scheduled, queueKeys("idc").group("g")))).toBe(0)
        expect(yield* io(() => c.exists(uniqueKey("idc", "t", utf8("second"))))).toBe(0)
      })
  )

  it.effect(
    "a generated id that is already taken is not replaced: TaskIdConflict, nothing written (a second id would be a second task)",
    () =>
      Effect.gen(function* () {
        yield* enqueue("t", "old", { queue: "regen", taskId: "taken" })
        let drawn = 0
        const ids =
          (...xs: Array<string>) =>
          () => {
            drawn++
            return xs.shift() ?? "exhausted"
          }
        const one = yield* enqueueUntraced("t", "new", { queue: "regen" }, ids("taken", "fresh-1")).pipe(Effect.flip)
        expect(one._tag).toBe("TaskIdConflict")
        expect(drawn).toBe(1)
        const many = yield* enqueueManyUntraced(
          [
            { type: "t", payload: "a", options: { queue: "regen" } },
            { type: "t", payload: "b", options: { queue: "regen", taskId: "taken" } },
            { type: "t", payload: "c", options: { queue: "regen", processIn: 60_000 } }
          ],
          ids("taken", "fresh-c", "fresh-a")
        )
        expect(many.map((r) => (Result.isSuccess(r) ? r.success.id : r.failure._tag))).toEqual([
          "TaskIdConflict",
          "TaskIdConflict",
          "fresh-c"
        ])
        expect(drawn).toBe(3)
        expect(yield* io(() => c.lrange(queueKeys("regen").pending, 0, -1))).toEqual(["taken"])
        expect((yield* io(() => readTask(c, "regen", "taken"))).msg!.payload).toEqual(utf8("old"))
      })
  )

  it.effect(
    "the same write twice (same id, same message) is one task and two successes: pending, scheduled, grouped, unique",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const k = queueKeys("again")
        const cases = [
          { taskId: "p" },
          { taskId: "s", processIn: 60_000 },
          { taskId: "g", group: "grp" },
          { taskId: "u", unique: 60_000 },
          { taskId: "us", unique: 60_000, processIn: 60_000 }
        ] as const
        for (const opts of cases) {
          const first = yield* enqueue("t", `payload-${opts.taskId}`, { queue: "again", ...opts })
          const second = yield* enqueue("t", `payload-${opts.taskId}`, { queue: "again", ...opts })
          expect(second).toEqual(first)
        }
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["u", "p"])
        expect((yield* io(() => zsetOf(c, k.scheduled))).map(([id]) => id)).toEqual(["s", "us"])
        expect((yield* io(() => zsetOf(c, k.group("grp")))).map(([id]) => id)).toEqual(["g"])
        expect(yield* io(() => c.get(uniqueKey("again", "t", utf8("payload-u"))))).toBe("u")
        expect(yield* io(() => c.get(uniqueKey("again", "t", utf8("payload-us"))))).toBe("us")
        // A different message under a taken id is still a conflict, and another task with a held lock still a duplicate.
        expect(
          (yield* enqueue("t", "payload-p", { queue: "again", taskId: "p", maxRetry: 3 }).pipe(Effect.flip))._tag
        ).toBe("TaskIdConflict")
        expect(
          (yield* enqueue("t", "payload-u", { queue: "again", taskId: "u2", unique: 60_000 }).pipe(Effect.flip))._tag
        ).toBe("DuplicateTask")
      })
  )

  it.effect("the same id in another queue is no conflict", () =>
    Effect.gen(function* () {
      yield* enqueue("t", undefined, { queue: "q-x", taskId: "shared-id" })
      const other = yield* enqueue("t", undefined, { queue: "q-y", taskId: "shared-id" })
      expect(other.queue).toBe("q-y")
    })
  )

  it.effect("payload forms: bytes as is, string as UTF-8, undefined as nil, other values as JSON", () =>
    Effect.gen(function* () {
      const bin = new Uint8Array([0, 1, 0, 255])
      const cases: ReadonlyArray<[unknown, Uint8Array | undefined]> = [
        [bin, bin],
        ["héllo", utf8("héllo")],
        [undefined, undefined],
        [{ a: [1, null] }, utf8('{"a":[1,null]}')],
        [null, utf8("null")],
        [7, utf8("7")]
      ]
      for (const [p, bytes] of cases) {
        const info = yield* enqueue("t", p, { queue: "payloads" })
        expect((yield* io(() => readTask(c, "payloads", info.id))).msg!.payload).toEqual(bytes)
      }
    })
  )
})

layer(testBrokerLayer())("queue registration cache", (it) => {
  it.effect("SADD asynq:queues goes with the first enqueue to a queue, is skipped for a minute, then sent again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const broker = yield* Broker
      expect(broker.knownQueues.has("cached", baseNowMs)).toBe(false)
      yield* enqueue("t", undefined, { queue: "cached" })
      expect(broker.knownQueues.has("cached", baseNowMs)).toBe(true)
      expect(yield* io(() => c.sismember("asynq:queues", "cached"))).toBe(1)
      // Removed behind our back (an operator deleted the queue): within the minute the SADD is skipped ...
      yield* io(() => c.srem("asynq:queues", "cached"))
      yield* TestClock.adjust("59 seconds")
      yield* enqueue("t", undefined, { queue: "cached" })
      expect(yield* io(() => c.sismember("asynq:queues", "cached"))).toBe(0)
      // ... and after it the queue is registered again.
      yield* TestClock.adjust("1 second")
      yield* enqueue("t", undefined, { queue: "cached" })
      expect(yield* io(() => c.sismember("asynq:queues", "cached"))).toBe(1)
      // A fresh broker (a new process) registers it at once.
      yield* io(() => c.srem("asynq:queues", "cached"))
      yield* enqueue("t", undefined, { queue: "cached" }).pipe(Effect.provide(Layer.fresh(testBrokerLayer())))
      expect(yield* io(() => c.sismember("asynq:queues", "cached"))).toBe(1)
      expect(yield* io(() => c.llen(queueKeys("cached").pending))).toBe(4)
    })
  )
})

layer(testBrokerLayer())("enqueueMessage (real Redis)", (it) => {
  it.effect("writes a ready-made message: pending, scheduled (processAtMs later than now), or into its group", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      expect(yield* enqueueMessage(makeMsg("em", "p1"))).toBe("pending")
      expect((yield* io(() => readTask(c, "em", "p1"))).fields).toEqual({
        state: "pending",
        pending_since: ns(baseNowMs)
      })
      expect(yield* enqueueMessage(makeMsg("em", "s1"), { processAtMs: baseNowMs + 30_000 })).toBe("scheduled")
      expect(yield* enqueueMessage(makeMsg("em", "s0"), { processAtMs: baseNowMs })).toBe("pending")
      expect(yield* enqueueMessage(makeMsg("em", "g1", { groupKey: "grp" }))).toBe("aggregating")
      expect(yield* io(() => zsetOf(c, queueKeys("em").scheduled))).toEqual([["s1", nowSec + 30]])
      expect(yield* io(() => zsetOf(c, queueKeys("em").group("grp")))).toEqual([["g1", nowSec]])
      expect(yield* io(() => c.smembers("asynq:queues"))).toContain("em")
    })
  )

  it.effect(
    "uniqueTtlMs: computes asynq's key when the message has none, and reports duplicates and id conflicts",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const payload = utf8('{"same":true}')
        const msg = makeMsg("emu", "u1", { payload })
        expect(yield* enqueueMessage(msg, { uniqueTtlMs: 60_000 })).toBe("pending")
        const lock = uniqueKey("emu", msg.type, msg.payload)
        expect((yield* io(() => readTask(c, "emu", "u1"))).msg!.uniqueKey).toBe(lock)
        expect(yield* io(() => c.get(lock))).toBe("u1")
        expect(
          (yield* enqueueMessage(makeMsg("emu", "u2", { payload }), { uniqueTtlMs: 60_000 }).pipe(Effect.flip))._tag
        ).toBe("DuplicateTask")
        expect(yield* io(() => c.exists(queueKeys("emu").task("u2")))).toBe(0)
        expect((yield* enqueueMessage(makeMsg("emu", "u1")).pipe(Effect.flip))._tag).toBe("TaskIdConflict")
      })
  )

  it.effect("rejects a message it cannot write, before touching Redis", () =>
    Effect.gen(function* () {
      const bad = [
        [makeMsg("emv", ""), "id"],
        [makeMsg("emv", "x", { type: " " }), "type"],
        [makeMsg("", "x"), "queue"]
      ] as const
      for (const [m, field] of bad) {
        const e = yield* enqueueMessage(m).pipe(Effect.flip)
        expect(e).toMatchObject({ _tag: "InvalidArgument", field })
      }
      const e = yield* enqueueMessage(makeMsg("emv", "y"), { uniqueTtlMs: 500 }).pipe(Effect.flip)
      expect(e).toMatchObject({
        _tag: "InvalidArgument",
        field: "uniqueTtlMs",
        message: "uniqueTtlMs must be a finite number of milliseconds >= 1000, got 500"
      })
      expect(yield* io(() => c.keys("asynq:{emv}:*"))).toEqual([])
    })
  )

  it.effect("rejects out-of-bounds times and lone surrogates (issue 13, point 7), before touching Redis", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const cases = [
        [enqueueMessage(makeMsg("emb", "x"), { uniqueTtlMs: 1e300 }), "uniqueTtlMs"],
        [enqueueMessage(makeMsg("emb", "x"), { processAtMs: 1e300 }), "processAtMs"],
        [enqueueMessage(makeMsg("emb", "x", { type: "t\uD800" })), "type"],
        [enqueueMessage(makeMsg("emb", "x\uDC00")), "id"],
        [enqueueMessage(makeMsg("emb\uD800", "x")), "queue"],
        [enqueueMessage(makeMsg("emb", "x", { groupKey: "g\uD800" })), "groupKey"],
        [enqueueMessage(makeMsg("emb", "x", { headers: { h: "\uD800" } })), "headers"]
      ] as const
      for (const [eff, field] of cases) {
        const e = yield* Effect.flip(eff)
        expect(e).toMatchObject({ _tag: "InvalidArgument", field })
      }
      expect(yield* io(() => c.keys("asynq:{emb*"))).toEqual([])
      expect(yield* io(() => c.sismember("asynq:queues", "emb"))).toBe(0)
    })
  )
})
