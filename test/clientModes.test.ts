/**
 * The enqueue modes on the Promise client (`createClient`): throttle, debounce and keep-last, the
 * same scripts as the Steps (test/steps/enqueueModes.test.ts and enqueueKeepLast.test.ts rule their
 * time with TestClock; here the windows are long enough that the real clock does not matter), and
 * their typed rejections.
 */
import type { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Client, createClient, InvalidArgument } from "../src/client.js"
import { defineTask } from "../src/tasks/defineTask.js"
import { queueKeys } from "../src/wire/keys.js"
import { decodeTaskMessage } from "../src/wire/TaskMessage.js"
import { flushTestDb, rawClient, testRedisUrl } from "./support/redis.js"
import * as Schema from "effect/Schema"

let c: IORedis
let client: Client
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
  client = createClient({ url: testRedisUrl() })
})
afterAll(async () => {
  await client.close()
  c.disconnect()
})

const payloadOf = async (queue: string, id: string) =>
  JSON.parse(
    new TextDecoder().decode(decodeTaskMessage((await c.hgetBuffer(queueKeys(queue).task(id), "msg"))!).payload)
  )

describe("the Promise client's enqueue modes (real Redis)", () => {
  it("enqueueThrottled: the first of a window is pending, the others write nothing and name it", async () => {
    const q = { queue: "pc-throttle" }
    const first = await client.enqueueThrottled("t:sync", { n: 0 }, { key: "u:1", window: 60_000 }, q)
    if (first.throttled) throw new Error("the first was throttled")
    expect(first.info.state).toBe("pending")
    for (let n = 1; n <= 10; n++)
      expect(await client.enqueueThrottled("t:sync", { n }, { key: "u:1", window: 60_000 }, q)).toEqual({
        throttled: true,
        windowTaskId: first.info.id
      })
    expect(await c.lrange(queueKeys("pc-throttle").pending, "0", "-1")).toEqual([first.info.id])
  })

  it("enqueueDebounced: 200 enqueues of one key leave one scheduled task, with the last payload", async () => {
    const q = { queue: "pc-debounce" }
    let last = ""
    let replaced = 0
    for (let n = 0; n < 200; n++) {
      const r = await client.enqueueDebounced("t:reindex", { n }, { key: "doc:1", window: 60_000 }, q)
      expect(r.info.state).toBe("scheduled")
      if (r.replaced) replaced++
      last = r.info.id
    }
    expect(replaced).toBe(199)
    const k = queueKeys("pc-debounce")
    expect(await c.zrange(k.scheduled, "0", "-1")).toEqual([last])
    expect(await payloadOf("pc-debounce", last)).toEqual({ n: 199 })
  })

  it("enqueueKeepLast (with a task definition): pending when the key is free, else one waiting task, the last", async () => {
    const Sync = defineTask("crm:sync", Schema.Struct({ n: Schema.Number }), { queue: "pc-keeplast" })
    const first = await client.enqueueKeepLast(Sync, { n: 0 }, { key: "c:1" })
    expect(first).toMatchObject({ waiting: false, replaced: false, info: { state: "pending" } })
    const second = await client.enqueueKeepLast(Sync, { n: 1 }, { key: "c:1" })
    expect(second).toMatchObject({ waiting: true, replaced: false, info: { state: "scheduled" } })
    const third = await client.enqueueKeepLast(Sync, { n: 2 }, { key: "c:1" })
    expect(third).toMatchObject({ waiting: true, replaced: true })
    const k = queueKeys("pc-keeplast")
    expect(await c.zrange(k.scheduled, "0", "-1")).toEqual([third.info.id])
    expect(await c.exists(k.task(second.info.id))).toBe(0)
    expect(await payloadOf("pc-keeplast", third.info.id)).toEqual({ n: 2 })
    // The definition's payload schema holds: a bad payload is refused before anything is written.
    await expect(client.enqueueKeepLast(Sync, { n: "x" } as never, { key: "c:2" })).rejects.toMatchObject({
      _tag: "InvalidArgument",
      field: "payload"
    })
  })

  it("rejects bad mode options with InvalidArgument, writing nothing", async () => {
    const q = { queue: "pc-bad" }
    const rejected = (p: Promise<unknown>) =>
      p.then(
        () => {
          throw new Error("resolved")
        },
        (e: unknown) => e
      )
    const e1 = await rejected(client.enqueueThrottled("t", 1, { key: "", window: 1000 }, q))
    expect(e1).toBeInstanceOf(InvalidArgument)
    expect(e1).toMatchObject({ field: "throttle.key" })
    expect(await rejected(client.enqueueDebounced("t", 1, { key: "k", window: 0 }, q))).toMatchObject({
      _tag: "InvalidArgument",
      field: "debounce.window"
    })
    expect(await rejected(client.enqueueKeepLast("t", 1, { key: "k" }, { ...q, processIn: 1000 }))).toMatchObject({
      _tag: "InvalidArgument",
      field: "processIn"
    })
    expect(await c.keys("asynq:{pc-bad}:*")).toEqual([])
  })
})
