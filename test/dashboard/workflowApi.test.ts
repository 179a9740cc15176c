/**
 * The dashboard's workflow API through the web-standard handler, on executions made by the real
 * engine (a worker process, see workflowFixture.ts): the workflows found from their control
 * queues, a page of executions with state filters, one execution's steps (activities, a waiting
 * deferred), bad input and unknown names as JSON errors; resume and cancel refused on a read-only
 * dashboard, without the token or from another site, and done with actions allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDashboardHandler, type DashboardHandler } from "../../adapters/dashboard/index.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { arrangeWorkflowData, type WorkflowData } from "./workflowFixture.js"

const origin = "http://localhost:8080"
let data: WorkflowData
let readOnly: DashboardHandler
let withActions: DashboardHandler
const token = "s3cret-wf"

const call = async (h: DashboardHandler, method: string, path: string, headers: Record<string, string> = {}) => {
  const res = await h(new Request(origin + path, { method, headers }))
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as any) }
}
const get = (h: DashboardHandler, path: string) => call(h, "GET", path)
const post = (h: DashboardHandler, path: string, headers: Record<string, string> = {}) =>
  call(h, "POST", path, { authorization: `Bearer ${token}`, origin, ...headers })

beforeAll(async () => {
  await flushTestDb()
  data = await arrangeWorkflowData(testRedisUrl())
  readOnly = createDashboardHandler({ redis: testRedisUrl() })
  withActions = createDashboardHandler({ redis: testRedisUrl(), allowActions: true, token })
}, 90_000)
afterAll(async () => {
  await readOnly?.close()
  await withActions?.close()
  await data?.close()
})

const path = (id: string) => `/api/workflows/Shop.Order/executions/${encodeURIComponent(id)}`

describe("workflow API", { timeout: 60_000 }, () => {
  it("lists the workflows found from their control queues (and none under another prefix)", async () => {
    expect(await get(readOnly, "/api/workflows")).toEqual({
      status: 200,
      body: {
        prefix: "workflow",
        workflows: [
          { workflow: "Shop.Order", queues: ["workflow:Shop.Order"] },
          { workflow: "Shop.Refund", queues: ["workflow:Shop.Refund"] }
        ]
      }
    })
    expect(await get(readOnly, "/api/workflows?prefix=other")).toEqual({
      status: 200,
      body: { prefix: "other", workflows: [] }
    })
  })

  it("lists a workflow's executions with state, runs, outcome and error; filters by state; pages", async () => {
    const all = await get(readOnly, "/api/workflows/Shop.Order/executions")
    expect(all.status).toBe(200)
    expect(all.body).toMatchObject({ workflow: "Shop.Order", page: 1, more: false })
    const byId = Object.fromEntries(all.body.executions.map((e: { executionId: string }) => [e.executionId, e]))
    expect(Object.keys(byId).sort()).toEqual([data.ids.done, data.ids.failed, data.ids.waiting].sort())
    expect(byId[data.ids.done]).toMatchObject({ state: "complete", failed: false, outcome: "success", runs: 1 })
    expect(byId[data.ids.failed]).toMatchObject({
      state: "suspended",
      failed: true,
      outcome: "suspended",
      error: "defect: card declined"
    })
    expect(byId[data.ids.waiting]).toMatchObject({ state: "suspended", failed: false, outcome: "suspended" })
    // A plain suspension has no error (its stored cause is null).
    expect(byId[data.ids.waiting].error).toBeUndefined()
    const failed = await get(readOnly, "/api/workflows/Shop.Order/executions?state=failed")
    expect(failed.body.executions.map((e: { executionId: string }) => e.executionId)).toEqual([data.ids.failed])
    // Page 2 of a one-page listing: empty, no more.
    expect((await get(readOnly, "/api/workflows/Shop.Order/executions?page=2")).body).toMatchObject({
      page: 2,
      executions: [],
      more: false
    })
    const small = await get(readOnly, "/api/workflows/Shop.Order/executions?size=1")
    expect(small.status).toBe(200)
  })

  it("shows one execution's steps: activities done and failed with their result and error, a waiting deferred, payload", async () => {
    const refund = await get(readOnly, `/api/workflows/Shop.Refund/executions/${data.ids.refund}`)
    expect(refund.body).toMatchObject({
      state: "complete",
      outcome: "failure",
      error: "gateway timeout for o-9",
      activities: [{ name: "refund", attempt: 1, status: "failed", error: "gateway timeout for o-9" }]
    })
    const failed = await get(readOnly, path(data.ids.failed))
    expect(failed.status).toBe(200)
    expect(failed.body).toMatchObject({
      workflow: "Shop.Order",
      executionId: data.ids.failed,
      queue: "workflow:Shop.Order",
      state: "suspended",
      failed: true,
      error: "defect: card declined",
      payload: { order: "o-2", kind: "fail" },
      // The charge's failure parked the execution (SuspendOnFailure): no exit of it is stored.
      activities: [{ name: "reserve", attempt: 1, status: "done", result: "reserved o-2" }],
      deferreds: [],
      clocks: []
    })
    const waiting = await get(readOnly, path(data.ids.waiting))
    expect(waiting.body.deferreds).toEqual([{ name: "approval", status: "waiting" }])
    const done = await get(readOnly, path(data.ids.done))
    expect(done.body).toMatchObject({ state: "complete", outcome: "success", deferreds: [] })
    expect(done.body.result).toMatchObject({ _tag: "Complete", exit: { _tag: "Success" } })
  })

  it("bad input and unknown names are JSON errors with fitting statuses", async () => {
    expect(await get(readOnly, "/api/workflows/Shop.Order/executions?state=sleepy")).toMatchObject({
      status: 400,
      body: { error: { code: "InvalidArgument", message: expect.stringContaining("state must be one of") } }
    })
    expect((await get(readOnly, "/api/workflows/Shop.Order/executions?page=0")).status).toBe(400)
    expect((await get(readOnly, "/api/workflows/Shop.Order/executions?shards=x")).status).toBe(400)
    expect(await get(readOnly, "/api/workflows/Nobody/executions")).toMatchObject({
      status: 404,
      body: { error: { code: "QueueNotFound" } }
    })
    expect(await get(readOnly, path("no-such-id"))).toMatchObject({
      status: 404,
      body: { error: { code: "ExecutionNotFound", message: 'workflow "Shop.Order" has no execution "no-such-id"' } }
    })
    expect((await call(readOnly, "GET", `${path(data.ids.failed)}:resume`)).status).toBe(404)
    expect((await call(readOnly, "DELETE", `${path(data.ids.failed)}:resume`)).status).toBe(405)
  })

  it("read-only: resume and cancel are refused (403) and change nothing", async () => {
    for (const verb of ["resume", "cancel"]) {
      const r = await call(readOnly, "POST", `${path(data.ids.waiting)}:${verb}`, { origin })
      expect(r).toMatchObject({ status: 403, body: { error: { code: "ActionsDisabled" } } })
    }
    expect(await data.detail(data.ids.waiting)).toMatchObject({ state: "suspended", interrupt: undefined })
  })

  it("actions allowed: the token and the Origin check still apply", async () => {
    expect((await call(withActions, "POST", `${path(data.ids.failed)}:resume`, { origin })).status).toBe(401)
    expect(
      await post(withActions, `${path(data.ids.failed)}:resume`, { origin: "http://attacker.example" })
    ).toMatchObject({ status: 403, body: { error: { code: "CrossSiteRequest" } } })
    expect(await data.detail(data.ids.failed)).toMatchObject({ state: "suspended", failed: true })
  })

  it("actions allowed: resume retries the failed execution, which completes; cancel interrupts the waiting one; a complete one refuses both (409)", async () => {
    await data.fixCard()
    const resumed = await post(withActions, `${path(data.ids.failed)}:resume`)
    expect(resumed).toMatchObject({
      status: 200,
      body: {
        workflow: "Shop.Order",
        action: "resume",
        executionId: data.ids.failed,
        from: "suspended",
        failed: true,
        outcome: "run-enqueued"
      }
    })
    const after = await data.until(data.ids.failed, (x) => x.state === "complete", "the resumed order complete")
    expect(after).toMatchObject({ outcome: "success", runs: 2 })
    expect(after.result).toMatchObject({ exit: { value: "reserved o-2, charged, shipped" } })
    const cancelled = await post(withActions, `${path(data.ids.waiting)}:cancel`)
    expect(cancelled).toMatchObject({ status: 200, body: { action: "cancel", from: "suspended" } })
    const ended = await data.until(data.ids.waiting, (x) => x.state === "complete", "the cancelled order complete")
    expect(ended).toMatchObject({ outcome: "failure", error: "interrupted", interrupt: "interrupt", deferreds: [] })
    for (const verb of ["resume", "cancel"])
      expect(await post(withActions, `${path(data.ids.done)}:${verb}`)).toMatchObject({
        status: 409,
        body: { error: { code: "InvalidState" } }
      })
  })
})
