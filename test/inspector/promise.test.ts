import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Redis as IORedis } from "ioredis"
import { createInspector } from "../../src/inspector/promise.js"
import { asynqMsg, putInZset, putPending, restoreSnapshot } from "../support/asynqLayout.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"

let c: IORedis
beforeAll(async () => {
  await flushTestDb()
  c = rawClient()
})
afterAll(() => c.disconnect())

describe("createInspector (Promise facade)", () => {
  it("inspects and administers a queue without Effect; errors reject with the tagged error", async () => {
    await restoreSnapshot(c, "a-enqueue")
    await putPending(c, asynqMsg("default", "extra"), Date.now())
    await putInZset(c, asynqMsg("default", "later"), "scheduled", Math.floor(Date.now() / 1000) + 60)
    const inspector = createInspector({ url: testRedisUrl() })
    try {
      expect(await inspector.queues()).toEqual(["critical", "default"])
      expect((await inspector.getQueueInfo("default")).pending).toBe(3)
      expect((await inspector.listTasks("default", "pending", { pageSize: 1 })).map((t) => t.id)).toEqual(["a-email-1"])
      expect(await inspector.runTask("default", "later")).toEqual({ id: "later", from: "scheduled" })
      expect(await inspector.deleteAll("default", "pending")).toBe(4)
      await expect(inspector.getTaskInfo("default", "later")).rejects.toMatchObject({ _tag: "TaskNotFound" })
      await expect(inspector.getQueueInfo("nope")).rejects.toMatchObject({
        _tag: "QueueNotFound",
        message: 'queue "nope" does not exist'
      })
      await inspector.pauseQueue("critical")
      expect((await inspector.getQueueInfo("critical")).paused).toBe(true)
      await expect(inspector.deleteQueue("critical")).rejects.toMatchObject({ _tag: "QueueNotEmpty" })
      expect(await inspector.deleteQueue("critical", { force: true })).toEqual({ deletedTasks: 1 })
      expect(await inspector.queues()).toEqual(["default"])
    } finally {
      await inspector.close()
    }
  })
})

describe("createInspector().redisInfo", () => {
  it("returns Redis INFO of the single node, parsed into a record and raw", async () => {
    const inspector = createInspector({ url: testRedisUrl() })
    try {
      const [node, ...rest] = await inspector.redisInfo()
      expect(rest).toEqual([])
      expect(node!.address).toBe("")
      expect(node!.info["redis_version"]).toMatch(/^\d+\.\d+/)
      expect(node!.raw).toContain(`redis_version:${node!.info["redis_version"]}`)
      expect(Number(node!.info["connected_clients"])).toBeGreaterThanOrEqual(1)
    } finally {
      await inspector.close()
    }
  })
})
