/**
 * "The same message again is the same task, a success" holds for a task Go asynq wrote: Go's
 * proto.Marshal writes the headers map in random order, so its bytes for the same message differ
 * from ours (sorted) about as often as not with two headers, and more with more (issue 29, point 6:
 * 7 of 10 repeats were refused with TaskIdConflict). The task hash is arranged as Go leaves it
 * (our message, its header entries in another order), then the same task is enqueued again through
 * every write path: the Effect step for each target state (pending, scheduled, grouped, unique),
 * enqueueMany's batch script, and the Promise client.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import type { Redis as IORedis } from "ioredis"
import { createClient } from "../../src/client.js"
import { enqueue, enqueueManyUntraced } from "../../src/steps/enqueue.js"
import type { EnqueueOptions } from "../../src/steps/options.js"
import { queueKeys } from "../../src/wire/keys.js"
import { decodeTaskMessage, emptyTaskMessage, encodeTaskMessage } from "../../src/wire/TaskMessage.js"
import { uniqueKey } from "../../src/wire/uniqueKey.js"
import { fromHex } from "../support/fixtures.js"
import { testRedisUrl } from "../support/redis.js"
import { baseNowMs, io, stepsTestDb, testBrokerLayer, zsetOf } from "../support/arrange.js"
import { vectors } from "../wire/fromFixture.js"

const c = stepsTestDb()

/** `bytes` as Go's proto.Marshal may write the same message: fields in number order, header entries in reverse key order. */
const inGoOrder = (bytes: Uint8Array): Buffer => {
  const m = decodeTaskMessage(bytes)
  const keys = Object.keys(m.headers).sort().reverse()
  return Buffer.concat([
    encodeTaskMessage({ ...m, headers: {} }),
    ...keys.map((k) => encodeTaskMessage({ ...emptyTaskMessage, headers: { [k]: m.headers[k]! } }))
  ])
}

/** Rewrites a stored task's msg as Go would have written it (the same message, other bytes). */
const rewriteInGoOrder = async (client: IORedis, queue: string, id: string): Promise<void> => {
  const key = queueKeys(queue).task(id)
  const stored = await client.hgetBuffer(key, "msg")
  const goBytes = inGoOrder(new Uint8Array(stored!))
  expect(goBytes.equals(stored!)).toBe(false)
  await client.hset(key, "msg", goBytes)
}

const headers = { "trace-id": "abc123", "x-tenant": "acme", "x-b3": "1" }

layer(testBrokerLayer())("a repeat of a Go-written task (real Redis)", (it) => {
  it("inGoOrder makes Go's bytes: the captured vector with its entries unsorted, from Go's sorted re-marshal", () => {
    const v = vectors().decode_vectors.find((d) => d.name === "headers_unsorted")!
    expect(inGoOrder(fromHex(v.go_remarshal_hex!)).toString("hex")).toBe(v.hex)
  })

  it.effect(
    "the Effect step: the same task again is a success and one task, in every target state; a different header is still a conflict",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(baseNowMs)
        const q = "gowritten"
        const k = queueKeys(q)
        const cases: ReadonlyArray<EnqueueOptions & { taskId: string }> = [
          { taskId: "p" },
          { taskId: "s", processIn: 60_000 },
          { taskId: "g", group: "grp" },
          { taskId: "u", unique: 60_000 },
          { taskId: "us", unique: 60_000, processIn: 60_000 }
        ]
        for (const opts of cases) {
          const first = yield* enqueue("t", `payload-${opts.taskId}`, { queue: q, headers, ...opts })
          yield* io(() => rewriteInGoOrder(c, q, opts.taskId))
          const again = yield* enqueue("t", `payload-${opts.taskId}`, {
            queue: q,
            headers: { "x-b3": "1", "x-tenant": "acme", "trace-id": "abc123" },
            ...opts
          })
          expect(again).toEqual(first)
        }
        expect(yield* io(() => c.lrange(k.pending, 0, -1))).toEqual(["u", "p"])
        expect((yield* io(() => zsetOf(c, k.scheduled))).map(([id]) => id)).toEqual(["s", "us"])
        expect((yield* io(() => zsetOf(c, k.group("grp")))).map(([id]) => id)).toEqual(["g"])
        expect(yield* io(() => c.get(uniqueKey(q, "t", new TextEncoder().encode("payload-u"))))).toBe("u")
        // Another header value under the taken id is a conflict; another task under the held lock a duplicate.
        const changed = yield* enqueue("t", "payload-p", {
          queue: q,
          taskId: "p",
          headers: { ...headers, "x-tenant": "other" }
        }).pipe(Effect.flip)
        expect(changed._tag).toBe("TaskIdConflict")
        const fewer = yield* enqueue("t", "payload-p", {
          queue: q,
          taskId: "p",
          headers: { "x-tenant": "acme", "trace-id": "abc123" }
        }).pipe(Effect.flip)
        expect(fewer._tag).toBe("TaskIdConflict")
        const dup = yield* enqueue("t", "payload-u", { queue: q, taskId: "u2", unique: 60_000, headers }).pipe(
          Effect.flip
        )
        expect(dup._tag).toBe("DuplicateTask")
      })
  )

  it.effect("enqueueMany (the batch script): repeats of Go-written tasks succeed beside new tasks", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(baseNowMs)
      const q = "gowritten-many"
      const items = ["m1", "m2"].map((id) => ({
        type: "t",
        payload: { id },
        options: { queue: q, taskId: id, headers }
      }))
      const first = yield* enqueueManyUntraced(items)
      expect(first.every(Result.isSuccess)).toBe(true)
      for (const id of ["m1", "m2"]) yield* io(() => rewriteInGoOrder(c, q, id))
      const again = yield* enqueueManyUntraced([
        ...items,
        { type: "t", payload: { id: "m3" }, options: { queue: q, taskId: "m3", headers } }
      ])
      expect(again.map((r) => (Result.isSuccess(r) ? r.success.id : r.failure._tag))).toEqual(["m1", "m2", "m3"])
      expect((yield* io(() => c.lrange(queueKeys(q).pending, 0, -1))).sort()).toEqual(["m1", "m2", "m3"])
    })
  )

  it("the Promise client: the same task again resolves with the task, and nothing is written twice", async () => {
    const client = createClient({ url: testRedisUrl() })
    try {
      const q = "gowritten-client"
      const first = await client.enqueue("t", { n: 1 }, { queue: q, taskId: "c1", headers })
      await rewriteInGoOrder(c, q, "c1")
      const again = await client.enqueue("t", { n: 1 }, { queue: q, taskId: "c1", headers })
      expect(again.id).toBe(first.id)
      expect(again.state).toBe("pending")
      expect(await c.lrange(queueKeys(q).pending, 0, -1)).toEqual(["c1"])
      await expect(client.enqueue("t", { n: 2 }, { queue: q, taskId: "c1", headers })).rejects.toMatchObject({
        _tag: "TaskIdConflict"
      })
    } finally {
      await client.close()
    }
  })
})
