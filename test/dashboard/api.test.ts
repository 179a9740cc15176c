/**
 * The dashboard's JSON API and /metrics through the web-standard handler, on real queue data (see
 * fixture.ts): asynqmon's shapes and numbers as the inspector reads them, paging, task detail with
 * headers and trace id, servers, scheduler, groups, Redis info; read-only refusals, actions when
 * allowed, the token and the cross-site check.
 */
import { Effect, ManagedRuntime } from "effect"
import { TestClock } from "effect/testing"
import { createDashboardCore } from "../../adapters/dashboard/handler.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDashboardHandler, type DashboardHandler } from "../../adapters/dashboard/index.js"
import type { Broker } from "../../src/broker/Broker.js"
import { clearQueueLimit, getQueueLimit, setQueueLimit } from "../../src/inspector/control.js"
import { getQueueInfo } from "../../src/inspector/queueInfo.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { Redis } from "../../src/redis/Redis.js"
import { Redis as IORedis } from "ioredis"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { arrangeDashboardData, type DashboardData, traceId, traceparent } from "./fixture.js"

const origin = "http://localhost:8080"
let data: DashboardData
let readOnly: DashboardHandler
let rt: ManagedRuntime.ManagedRuntime<Broker, unknown>
const inspect = <A, E>(eff: Effect.Effect<A, E, Broker>) => rt.runPromise(eff)

const get = async (h: DashboardHandler, path: string, headers: Record<string, string> = {}) => {
  const res = await h(new Request(origin + path, { headers }))
  const text = await res.text()
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: res.headers.get("content-type")?.startsWith("application/json") ? (JSON.parse(text) as any) : undefined
  }
}
const send = async (
  h: DashboardHandler,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) => {
  const res = await h(
    new Request(origin + path, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as any) }
}

beforeAll(async () => {
  await flushTestDb()
  data = await arrangeDashboardData(testRedisUrl())
  readOnly = createDashboardHandler({ redis: testRedisUrl() })
  rt = ManagedRuntime.make(brokerLayer(testRedisUrl()))
}, 60_000)
afterAll(async () => {
  await data?.close()
  await readOnly?.close()
  await rt?.dispose()
})

const snapshotKeys = [
  "queue",
  "memory_usage_bytes",
  "size",
  "groups",
  "latency_msec",
  "display_latency",
  "active",
  "pending",
  "aggregating",
  "scheduled",
  "retry",
  "archived",
  "completed",
  "processed",
  "succeeded",
  "failed",
  "processed_total",
  "failed_total",
  "paused",
  "timestamp"
].sort()

describe("dashboard API (read-only)", () => {
  it("GET /api/queues: asynqmon's { queues: [...] } with every snapshot field, the numbers the inspector reads", async () => {
    const r = await get(readOnly, "/api/queues")
    expect(r.status).toBe(200)
    const byName = Object.fromEntries((r.body.queues as Array<any>).map((q) => [q.queue, q]))
    expect(Object.keys(byName).sort()).toEqual(["cron", "default", "low", "slow"])
    for (const q of r.body.queues) expect(Object.keys(q).sort()).toEqual(snapshotKeys)
    const d = byName.default
    expect({
      pending: d.pending,
      active: d.active,
      scheduled: d.scheduled,
      retry: d.retry,
      archived: d.archived,
      completed: d.completed,
      aggregating: d.aggregating,
      groups: d.groups
    }).toEqual({
      pending: 25,
      active: 1,
      scheduled: 1,
      retry: 1,
      archived: 1,
      completed: 1,
      aggregating: 2,
      groups: 1
    })
    expect(d.size).toBe(25 + 1 + 1 + 1 + 1 + 1 + 2)
    const info = await inspect(getQueueInfo("default"))
    expect([d.processed, d.failed, d.processed_total, d.failed_total, d.succeeded]).toEqual([
      info.processed,
      info.failed,
      info.processedTotal,
      info.failedTotal,
      info.processed - info.failed
    ])
    expect(d.failed).toBeGreaterThanOrEqual(2) // the retry and the archive were failures
    expect(d.latency_msec).toBeGreaterThan(0)
    expect(d.display_latency).toMatch(/^\d+(\.\d+)?(ms|s)$|m|h/)
    expect(d.memory_usage_bytes).toBeGreaterThan(0)
    expect(byName.low.paused).toBe(true)
    expect(d.paused).toBe(false)
    expect(Number.isNaN(Date.parse(d.timestamp))).toBe(false)
  })

  it("GET /api/queues/{q}: { current, history } with one entry per day asked", async () => {
    const r = await get(readOnly, "/api/queues/default?days=7")
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.current).sort()).toEqual(snapshotKeys)
    expect(r.body.history).toHaveLength(7)
    expect(Object.keys(r.body.history[0]).sort()).toEqual(["date", "failed", "processed", "queue", "succeeded"])
    expect(r.body.history[0].date).toBe(new Date().toISOString().slice(0, 10))
    expect(r.body.history[0].processed).toBe(r.body.current.processed)
  })

  it("lists a state's tasks by page (size/page), oldest pending first, with the queue's stats", async () => {
    const p1 = await get(readOnly, "/api/queues/default/pending_tasks?size=20&page=1")
    const p2 = await get(readOnly, "/api/queues/default/pending_tasks?size=20&page=2")
    expect(p1.body.tasks).toHaveLength(20)
    expect(p2.body.tasks).toHaveLength(5)
    expect(p1.body.tasks[0].id).toBe(data.ids.traced)
    expect(p1.body.tasks[0].payload).toBe('{"to":"ada@example.com"}')
    const all = [...p1.body.tasks, ...p2.body.tasks].map((t: any) => t.id)
    expect(new Set(all).size).toBe(25)
    expect(p1.body.stats.pending).toBe(25)
    const retry = await get(readOnly, "/api/queues/default/retry_tasks")
    expect(retry.body.tasks.map((t: any) => [t.id, t.error_message, t.retried, t.max_retry])).toEqual([
      [data.ids.retry, "card declined", 1, 3]
    ])
    expect(Date.parse(retry.body.tasks[0].next_process_at)).toBeGreaterThan(Date.now())
    const archived = await get(readOnly, "/api/queues/default/archived_tasks")
    expect(archived.body.tasks.map((t: any) => [t.id, t.error_message])).toEqual([[data.ids.archived, "corrupt image"]])
    const completed = await get(readOnly, "/api/queues/default/completed_tasks")
    expect(completed.body.tasks.map((t: any) => [t.id, t.result])).toEqual([[data.ids.completed, '{"rows":42}']])
    expect(completed.body.tasks[0].ttl_seconds).toBeGreaterThan(3500)
    const active = await get(readOnly, "/api/queues/default/active_tasks")
    // no server runs queue "default": asynqmon shows "-" for the start time
    expect(active.body.tasks.map((t: any) => [t.id, t.start_time, t.is_orphaned])).toEqual([
      [data.ids.active, "-", false]
    ])
    const scheduled = await get(readOnly, "/api/queues/default/scheduled_tasks")
    expect(scheduled.body.tasks.map((t: any) => [t.id, t.payload])).toEqual([[data.ids.scheduled, "in an hour"]])
  })

  it("GET /api/queues/{q}/tasks/{id}: the task's detail with its headers and the trace id of its traceparent", async () => {
    const r = await get(readOnly, `/api/queues/default/tasks/${data.ids.traced}`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      id: data.ids.traced,
      queue: "default",
      type: "email:send",
      state: "pending",
      payload: '{"to":"ada@example.com"}',
      max_retry: 25,
      retried: 0,
      error_message: "",
      headers: { traceparent, "x-tenant": "acme" },
      trace_id: traceId,
      timeout_seconds: 1800
    })
    expect(Buffer.from(r.body.payload_base64, "base64").toString()).toBe('{"to":"ada@example.com"}')
    const missing = await get(readOnly, "/api/queues/default/tasks/no-such-task")
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("TaskNotFound")
  })

  it("groups: GET /api/queues/{q}/groups and a group's aggregating tasks", async () => {
    const g = await get(readOnly, "/api/queues/default/groups")
    expect(g.body.groups).toEqual([{ group: "digest-42", size: 2 }])
    expect(g.body.stats.aggregating).toBe(2)
    const t = await get(readOnly, "/api/queues/default/groups/digest-42/aggregating_tasks")
    // both were added in the same second: Redis orders equal scores by member (the id), so sort here
    expect(
      t.body.tasks
        .map((x: any) => [x.type, x.group, x.payload])
        .sort((a: Array<string>, b: Array<string>) => (a[2]! < b[2]! ? -1 : 1))
    ).toEqual([
      ["digest:item", "digest-42", '{"n":1}'],
      ["digest:item", "digest-42", '{"n":2}']
    ])
    expect(t.body.groups).toEqual([{ group: "digest-42", size: 2 }])
  })

  it("GET /api/servers: the running worker with its active worker (the task it holds)", async () => {
    const r = await get(readOnly, "/api/servers")
    expect(r.body.servers).toHaveLength(1)
    const s = r.body.servers[0]
    expect(s).toMatchObject({
      pid: process.pid,
      concurrency: 2,
      queue_priorities: { slow: 1 },
      strict_priority_enabled: false,
      status: "active"
    })
    expect(s.active_workers.map((w: any) => [w.task_id, w.queue, w.task_type, w.task_payload])).toEqual([
      [data.ids.slow, "slow", "slow:job", '{"step":1}']
    ])
    expect(Number.isNaN(Date.parse(s.active_workers[0].start_time))).toBe(false)
    // the active task of queue "slow" now shows its worker's start time
    const active = await get(readOnly, "/api/queues/slow/active_tasks")
    expect(active.body.tasks[0].start_time).toBe(s.active_workers[0].start_time)
  })

  it("GET /api/scheduler_entries and an entry's enqueue_events", async () => {
    const r = await get(readOnly, "/api/scheduler_entries")
    const entry = (r.body.entries as Array<any>).find((e) => e.id === data.entryId)
    expect(entry).toMatchObject({
      spec: "@every 1s",
      task_type: "cron:tick",
      task_payload: '{"source":"scheduler"}',
      options: ['Queue("cron")']
    })
    expect(Date.parse(entry.next_enqueue_at)).toBeGreaterThan(0)
    const ev = await get(readOnly, `/api/scheduler_entries/${encodeURIComponent(data.entryId)}/enqueue_events`)
    expect(ev.body.events.length).toBeGreaterThan(0)
    const first = ev.body.events[0]
    expect(Object.keys(first).sort()).toEqual(["enqueued_at", "task_id"])
    // the event names a task the scheduler really enqueued
    const task = await inspect(getTaskInfo("cron", first.task_id))
    expect(task.type).toBe("cron:tick")
  })

  it("GET /api/redis_info: INFO parsed, single node", async () => {
    const r = await get(readOnly, "/api/redis_info")
    expect(r.body.cluster).toBe(false)
    expect(r.body.info.redis_version).toMatch(/^\d+\.\d+/)
    expect(r.body.raw_info).toContain("# Server")
  })

  it("GET /metrics: asynq's queue metrics as Prometheus text, the numbers of /api/queues", async () => {
    const r = await get(readOnly, "/metrics")
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    const queues = (await get(readOnly, "/api/queues")).body.queues as Array<any>
    const d = queues.find((q) => q.queue === "default")
    expect(r.text).toContain("# TYPE asynq_queue_size gauge\n")
    expect(r.text).toContain("# TYPE asynq_tasks_processed_total counter\n")
    expect(r.text).toContain(`asynq_queue_size{queue="default"} ${d.size}\n`)
    expect(r.text).toContain(`asynq_tasks_enqueued_total{queue="default",state="pending"} 25\n`)
    expect(r.text).toContain(`asynq_tasks_enqueued_total{queue="default",state="retry"} 1\n`)
    expect(r.text).toContain(`asynq_tasks_failed_total{queue="default"} ${d.failed_total}\n`)
    expect(r.text).toContain(`asynq_queue_paused_total{queue="low"} 1\n`)
    expect(r.text).toContain(`asynq_queue_paused_total{queue="default"} 0\n`)
  })

  it("refuses every action with 403 and a clear JSON error, changing nothing", async () => {
    const refusals = [
      await send(readOnly, "POST", "/api/queues/default:pause"),
      await send(readOnly, "POST", `/api/queues/default/retry_tasks/${data.ids.retry}:run`),
      await send(readOnly, "DELETE", `/api/queues/default/archived_tasks/${data.ids.archived}`),
      await send(readOnly, "POST", "/api/queues/default/pending_tasks:archive_all"),
      await send(readOnly, "POST", "/api/queues/default/scheduled_tasks:batch_delete", {
        task_ids: [data.ids.scheduled]
      }),
      await send(readOnly, "POST", `/api/queues/slow/active_tasks/${data.ids.slow}:cancel`),
      await send(readOnly, "DELETE", "/api/queues/low")
    ]
    for (const r of refusals) {
      expect(r.status).toBe(403)
      expect(r.body.error.code).toBe("ActionsDisabled")
      expect(r.body.error.message).toContain("--allow-actions")
    }
    expect((await inspect(getQueueInfo("default"))).paused).toBe(false)
    expect((await inspect(getTaskInfo("default", data.ids.retry))).state).toBe("retry")
    expect((await inspect(getTaskInfo("default", data.ids.archived))).state).toBe("archived")
    expect((await inspect(getQueueInfo("default"))).pending).toBe(25)
  })

  it("answers unknown routes 404, wrong methods 405 (with Allow) and bad paging 400, as JSON", async () => {
    expect((await get(readOnly, "/api/nothing")).status).toBe(404)
    const wrong = await readOnly(new Request(origin + "/api/queues", { method: "POST" }))
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("GET")
    const bad = await get(readOnly, "/api/queues/default/pending_tasks?page=0")
    expect(bad.status).toBe(400)
    expect(bad.body.error).toEqual({ code: "InvalidArgument", message: "page must be a whole number >= 1, got 0" })
    expect((await get(readOnly, "/api/queues/nope")).body.error.code).toBe("QueueNotFound")
  })

  it("serves the page and its assets (no Redis needed) with a strict Content-Security-Policy", async () => {
    const page = await get(readOnly, "/")
    expect(page.status).toBe(200)
    expect(page.text).toContain('<script src="/assets/app.js" defer></script>')
    expect(page.text).toContain('{"allowActions":false,"basePath":""}')
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'")
    const js = await get(readOnly, "/assets/app.js")
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.text).toContain("hashchange")
    expect((await get(readOnly, "/assets/style.css")).status).toBe(200)
    expect((await get(readOnly, "/assets/nope.js")).status).toBe(404)
  })
})

describe("dashboard API with a token and a base path", () => {
  const token = "correct horse battery staple"
  let h: DashboardHandler
  beforeAll(() => {
    h = createDashboardHandler({ redis: testRedisUrl(), token, basePath: "/ops/dash/" })
  })
  afterAll(() => h.close())

  it("refuses without the token: 401 JSON for the API and /metrics, the token form for the page", async () => {
    const api = await get(h, "/ops/dash/api/queues")
    expect(api.status).toBe(401)
    expect(api.headers.get("www-authenticate")).toContain("Bearer")
    expect(api.body.error.code).toBe("Unauthorized")
    expect((await get(h, "/ops/dash/metrics")).status).toBe(401)
    expect((await get(h, "/ops/dash/api/queues", { authorization: "Bearer wrong" })).status).toBe(401)
    const page = await get(h, "/ops/dash/")
    expect(page.status).toBe(401)
    expect(page.text).toContain('name="token"')
    expect(page.text).not.toContain("app.js")
  })

  it("lets in a Bearer token; ?token= on a page sets an HttpOnly cookie and redirects to the URL without it", async () => {
    expect((await get(h, "/ops/dash/api/queues", { authorization: `Bearer ${token}` })).status).toBe(200)
    const visit = await h(new Request(`${origin}/ops/dash/?token=${encodeURIComponent(token)}`, { redirect: "manual" }))
    expect(visit.status).toBe(303)
    expect(visit.headers.get("location")).toBe("/ops/dash/")
    const cookie = visit.headers.get("set-cookie")!
    expect(cookie).toMatch(
      /^effect_asynq_dash_[0-9a-f]{8}=[0-9a-f]{64}; Path=\/ops\/dash\/; HttpOnly; SameSite=Strict$/
    )
    expect(cookie).not.toContain(token)
    const withCookie = await get(h, "/ops/dash/api/queues", { cookie: cookie.split(";")[0]! })
    expect(withCookie.status).toBe(200)
    expect(withCookie.body.queues.length).toBe(4)
    const page = await get(h, "/ops/dash/", { cookie: cookie.split(";")[0]! })
    expect(page.text).toContain('<script src="/ops/dash/assets/app.js" defer></script>')
  })

  it("ten wrong tokens in a minute from one address: that address gets 429 (right token or not), another address does not; no token at all is never counted", async () => {
    const limited = createDashboardHandler({ redis: testRedisUrl(), token, basePath: "/ops/dash/" })
    const attacker = { clientAddress: "203.0.113.7" }
    const api = (auth: string, info: { clientAddress: string }) =>
      limited(new Request(`${origin}/ops/dash/api/queues`, { headers: { authorization: `Bearer ${auth}` } }), info)
    for (let i = 0; i < 20; i++)
      expect((await limited(new Request(`${origin}/ops/dash/api/queues`), attacker)).status).toBe(401)
    for (let i = 0; i < 5; i++) expect((await api(`guess-${i}`, attacker)).status).toBe(401)
    for (let i = 5; i < 10; i++) {
      const login = new Request(`${origin}/ops/dash/login`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `token=guess-${i}`
      })
      expect((await limited(login, attacker)).status).toBe(401)
    }
    const refused = await api(token, attacker)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("TooManyWrongTokens")
    expect((await api(token, { clientAddress: "198.51.100.2" })).status).toBe(200)
    await limited.close()
  })

  it("the wrong-token count reads Effect's Clock: the window ends when the (test) clock says a minute has passed", async () => {
    const clock = await Effect.runPromise(Effect.scoped(TestClock.make()))
    await Effect.runPromise(clock.setTime(Date.UTC(2026, 10, 28, 12, 0, 0)))
    const core = createDashboardCore({ redis: testRedisUrl(), token }, "test", clock)
    const api = (auth: string) =>
      core.handle(
        new Request(`${origin}/api/queues`, { headers: { authorization: `Bearer ${auth}` } }),
        undefined,
        "203.0.113.9"
      )
    for (let i = 0; i < 10; i++) expect((await api(`guess-${i}`)).status).toBe(401)
    const refused = await api(token)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toBe("60")
    await Effect.runPromise(clock.adjust("59 seconds"))
    expect((await api(token)).headers.get("retry-after")).toBe("1")
    await Effect.runPromise(clock.adjust("1 second"))
    expect((await api(token)).status).toBe(200)
    await core.close()
  })

  it("two dashboards with different tokens on one host keep separate cookies (cookies are not kept apart by port)", async () => {
    const other = createDashboardHandler({
      redis: testRedisUrl(),
      token: "another-token-entirely",
      basePath: "/ops/dash/"
    })
    const cookieOf = async (handler: typeof h, t: string) =>
      (await handler(new Request(`${origin}/ops/dash/?token=${encodeURIComponent(t)}`, { redirect: "manual" }))).headers
        .get("set-cookie")!
        .split(";")[0]!
    const mine = await cookieOf(h, token)
    const theirs = await cookieOf(other, "another-token-entirely")
    expect(mine.split("=")[0]).not.toBe(theirs.split("=")[0])
    // A browser sends both cookies to both dashboards: each finds its own.
    const both = `${mine}; ${theirs}`
    expect((await get(h, "/ops/dash/api/queues", { cookie: both })).status).toBe(200)
    expect((await get(other, "/ops/dash/api/queues", { cookie: both })).status).toBe(200)
    expect((await get(other, "/ops/dash/api/queues", { cookie: mine })).status).toBe(401)
    await other.close()
  })

  it("the login form POSTs the token: wrong → 401 form saying so; right → 303 to the dashboard with the cookie; only style.css is served without it", async () => {
    const login = (body: string) =>
      h(
        new Request(`${origin}/ops/dash/login`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body,
          redirect: "manual"
        })
      )
    const form = await get(h, "/ops/dash/")
    expect(form.text).toContain('<form class="login" method="post" action="/ops/dash/login">')
    expect(form.text).not.toContain("login-error")
    const wrong = await login("token=nope")
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get("set-cookie")).toBeNull()
    expect(await wrong.text()).toContain('data-testid="login-error">Wrong token')
    const right = await login(new URLSearchParams({ token }).toString())
    expect(right.status).toBe(303)
    expect(right.headers.get("location")).toBe("/ops/dash/")
    expect(right.headers.get("set-cookie")).toMatch(
      /^effect_asynq_dash_[0-9a-f]{8}=[0-9a-f]{64}; Path=\/ops\/dash\/; HttpOnly; SameSite=Strict$/
    )
    expect((await get(h, "/ops/dash/assets/style.css")).status).toBe(200)
    expect((await get(h, "/ops/dash/assets/app.js")).status).toBe(401)
  })

  it("redirects the bare base path to it with a slash and knows nothing outside it", async () => {
    const r = await h(new Request(`${origin}/ops/dash`))
    expect(r.status).toBe(308)
    expect(r.headers.get("location")).toBe("/ops/dash/")
    expect((await get(h, "/api/queues", { authorization: `Bearer ${token}` })).status).toBe(404)
  })
})

describe("dashboard API with actions allowed", () => {
  let h: DashboardHandler
  beforeAll(() => {
    h = createDashboardHandler({ redis: testRedisUrl(), allowActions: true })
  })
  afterAll(() => h.close())

  it("refuses a state-changing request sent from another site's page (Origin not this host)", async () => {
    const r = await send(h, "POST", "/api/queues/default:pause", undefined, { origin: "https://evil.example" })
    expect(r.status).toBe(403)
    expect(r.body.error.code).toBe("CrossSiteRequest")
    expect((await inspect(getQueueInfo("default"))).paused).toBe(false)
  })

  it("pauses and resumes a queue", async () => {
    expect((await send(h, "POST", "/api/queues/default:pause", undefined, { origin })).status).toBe(204)
    expect((await inspect(getQueueInfo("default"))).paused).toBe(true)
    expect((await send(h, "POST", "/api/queues/default:resume")).status).toBe(204)
    expect((await inspect(getQueueInfo("default"))).paused).toBe(false)
  })

  it("runs, archives and deletes one task, and says 409 when the state does not fit", async () => {
    expect((await send(h, "POST", `/api/queues/default/retry_tasks/${data.ids.retry}:run`)).status).toBe(204)
    expect((await inspect(getTaskInfo("default", data.ids.retry))).state).toBe("pending")
    expect((await send(h, "POST", `/api/queues/default/scheduled_tasks/${data.ids.scheduled}:archive`)).status).toBe(
      204
    )
    expect((await inspect(getTaskInfo("default", data.ids.scheduled))).state).toBe("archived")
    expect((await send(h, "DELETE", `/api/queues/default/completed_tasks/${data.ids.completed}`)).status).toBe(204)
    expect((await get(h, `/api/queues/default/tasks/${data.ids.completed}`)).status).toBe(404)
    const activeRun = await send(h, "POST", `/api/queues/default/archived_tasks/${data.ids.active}:run`)
    expect(activeRun.status).toBe(409)
    expect(activeRun.body.error.code).toBe("InvalidState")
  })

  it("batch and bulk: batch_run answers pending_ids/error_ids; archive_all and delete_all answer counts", async () => {
    const batch = await send(h, "POST", "/api/queues/default/archived_tasks:batch_run", {
      task_ids: [data.ids.archived, "no-such-task"]
    })
    expect(batch.status).toBe(200)
    expect(batch.body).toEqual({ pending_ids: [data.ids.archived], error_ids: ["no-such-task"] })
    const pending = (await inspect(getQueueInfo("default"))).pending
    const archivedAll = await send(h, "POST", "/api/queues/default/pending_tasks:archive_all")
    expect(archivedAll.body).toEqual({ archived: pending })
    const deleted = await send(h, "DELETE", "/api/queues/default/groups/digest-42/aggregating_tasks:delete_all")
    expect(deleted.body).toEqual({ deleted: 2 })
    const after = await inspect(getQueueInfo("default"))
    expect([after.pending, after.aggregating]).toEqual([0, 0])
    const badBody = await send(h, "POST", "/api/queues/default/archived_tasks:batch_delete", { ids: [] })
    expect(badBody.status).toBe(400)
    expect(badBody.body.error.message).toContain("task_ids")
  })

  it("cancels an active task: 204 (a signal the worker receives)", async () => {
    const r = await send(h, "POST", `/api/queues/slow/active_tasks/${data.ids.slow}:cancel`)
    expect(r.status).toBe(204)
  })
})

describe("dashboard as a Lambda function URL handler", () => {
  it("turns the function URL event into a request: the API answers, the token comes from the cookies array, Set-Cookie goes to cookies", async () => {
    const { createDashboardUrlHandler } = await import("../../adapters/aws-lambda/dashboardHandler.js")
    const h = createDashboardUrlHandler({ redis: testRedisUrl(), token: "lambda-token" })
    try {
      const event = (rawPath: string, extra: Record<string, unknown> = {}) => ({
        version: "2.0",
        rawPath,
        headers: { host: "abc.lambda-url.eu-west-1.on.aws" },
        requestContext: { http: { method: "GET" }, domainName: "abc.lambda-url.eu-west-1.on.aws" },
        ...extra
      })
      expect((await h(event("/api/queues"))).statusCode).toBe(401)
      const visit = await h(event("/", { rawQueryString: "token=lambda-token" }))
      expect(visit.statusCode).toBe(303)
      expect(visit.cookies?.[0]).toMatch(/^effect_asynq_dash_[0-9a-f]{8}=[0-9a-f]{64};/)
      const api = await h(event("/api/queues", { cookies: [visit.cookies![0]!.split(";")[0]!] }))
      expect(api.statusCode).toBe(200)
      expect((JSON.parse(api.body) as { queues: Array<{ queue: string }> }).queues.map((q) => q.queue).sort()).toEqual([
        "cron",
        "default",
        "low",
        "slow"
      ])
      const refused = await h(
        event("/api/queues/default:pause", {
          headers: { host: "abc.lambda-url.eu-west-1.on.aws", authorization: "Bearer lambda-token" },
          requestContext: { http: { method: "POST" }, domainName: "abc.lambda-url.eu-west-1.on.aws" }
        })
      )
      expect(refused.statusCode).toBe(403)
    } finally {
      await h.close()
    }
  })
})

describe("dashboard over a Redis the application gives", () => {
  it("an open ioredis client (used as is, still open after close) or a Redis Layer serves the same queues", async () => {
    const client = new IORedis(testRedisUrl())
    const names = async (h: DashboardHandler) =>
      ((await get(h, "/api/queues")).body.queues as Array<{ queue: string }>).map((q) => q.queue).sort()
    const viaClient = createDashboardHandler({ redis: client })
    const viaLayer = createDashboardHandler({ redis: Redis.layer({ url: testRedisUrl() }) })
    try {
      expect(await names(viaClient)).toEqual(["cron", "default", "low", "slow"])
      expect(await names(viaLayer)).toEqual(["cron", "default", "low", "slow"])
    } finally {
      await viaClient.close()
      await viaLayer.close()
    }
    // The dashboard does not close what the application owns.
    expect(await client.ping()).toBe("PONG")
    client.disconnect()
  })
})

describe("dashboard API: a queue's flow-control limit", () => {
  let h: DashboardHandler
  beforeAll(() => {
    h = createDashboardHandler({ redis: testRedisUrl(), allowActions: true })
  })
  afterAll(async () => {
    await inspect(clearQueueLimit("low"))
    await h.close()
  })
  const queueRow = async (handler: DashboardHandler, q: string) =>
    ((await get(handler, "/api/queues")).body.queues as Array<any>).find((x) => x.queue === q)

  it("POST /api/queues/{q}/limit sets it (the stored form, default burst worked out); the queue list, the queue, GET …/limit and the inspector show it", async () => {
    const set = await send(
      h,
      "POST",
      "/api/queues/low/limit",
      { rate: { limit: 100, per: "1s" }, concurrency: 5 },
      { origin }
    )
    expect(set.status).toBe(200)
    const shown = { rate: { limit: 100, per_ms: 1000, interval_ms: 10, burst: 5 }, concurrency: 5 }
    expect(set.body).toEqual({ queue: "low", limit: shown })
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 100, perMs: 1000, intervalMs: 10, burst: 5 },
      concurrency: 5
    })
    const low = await queueRow(h, "low")
    expect(low.limit).toEqual(shown)
    // asynqmon's fields first and unchanged; the limit is the one field added, only on the queue that has one
    expect(Object.keys(low).slice(0, -1).sort()).toEqual(snapshotKeys)
    for (const q of ["default", "cron", "slow"]) expect(Object.keys(await queueRow(h, q)).sort()).toEqual(snapshotKeys)
    expect((await get(h, "/api/queues/low")).body.current.limit).toEqual(shown)
    expect((await get(h, "/api/queues/low/limit")).body).toEqual({ queue: "low", limit: shown })
    expect((await get(h, "/api/queues/default/limit")).body).toEqual({ queue: "default", limit: null })
    expect((await get(h, "/metrics")).text).toContain('effect_asynq_queue_concurrency_limit{queue="low"} 5\n')
  })

  it('a limit replaces the one before (a part left out is removed); the rate may be a text such as "6000/m" and carries its burst', async () => {
    expect((await send(h, "POST", "/api/queues/low/limit", { concurrency: 2 })).body).toEqual({
      queue: "low",
      limit: { concurrency: 2 }
    })
    expect(await inspect(getQueueLimit("low"))).toEqual({ concurrency: 2 })
    const text = await send(h, "POST", "/api/queues/low/limit", { rate: "6000/m", burst: 3, concurrency: null })
    expect(text.body).toEqual({
      queue: "low",
      limit: { rate: { limit: 6000, per_ms: 60_000, interval_ms: 10, burst: 3 } }
    })
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 6000, perMs: 60_000, intervalMs: 10, burst: 3 }
    })
    // Per-key parts: per_key in the body and in what is shown.
    const keyed = await send(h, "POST", "/api/queues/low/limit", {
      concurrency: 8,
      per_key: { rate: "10/s", burst: 2, concurrency: 2 }
    })
    expect(keyed.body).toEqual({
      queue: "low",
      limit: {
        concurrency: 8,
        per_key: { rate: { limit: 10, per_ms: 1000, interval_ms: 100, burst: 2 }, concurrency: 2 }
      }
    })
    expect(await inspect(getQueueLimit("low"))).toEqual({
      concurrency: 8,
      perKey: { rate: { limit: 10, perMs: 1000, intervalMs: 100, burst: 2 }, concurrency: 2 }
    })
    const badKey = await send(h, "POST", "/api/queues/low/limit", { concurrency: 8, per_key: { cap: 2 } })
    expect(badKey.status).toBe(400)
  })

  it("DELETE /api/queues/{q}/limit clears it (204): the queue is unlimited and its snapshot is asynqmon's shape again", async () => {
    await inspect(setQueueLimit("low", { concurrency: 3 }))
    expect((await send(h, "DELETE", "/api/queues/low/limit")).status).toBe(204)
    expect(await inspect(getQueueLimit("low"))).toBeUndefined()
    expect(Object.keys(await queueRow(h, "low")).sort()).toEqual(snapshotKeys)
    expect((await get(h, "/api/queues/low/limit")).body).toEqual({ queue: "low", limit: null })
    // clearing a queue that has no limit is no error
    expect((await send(h, "DELETE", "/api/queues/low/limit")).status).toBe(204)
  })

  it("bad input: 400 InvalidArgument saying what is wrong, and the limit stays as it was", async () => {
    await inspect(setQueueLimit("low", { concurrency: 4 }))
    const raw = await h(
      new Request(`${origin}/api/queues/low/limit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "concurrency=5"
      })
    )
    expect(raw.status).toBe(400)
    expect(((await raw.json()) as any).error).toEqual({
      code: "InvalidArgument",
      message:
        'the body must be JSON: { "rate": { "limit": 100, "per": "1s" }, "burst": 10, "concurrency": 5 } (each part optional, a rate or a concurrency at least)'
    })
    const cases: Array<readonly [unknown, string]> = [
      [
        [5],
        'the body must be a JSON object: { "rate": { "limit": 100, "per": "1s" }, "burst": 10, "concurrency": 5 } (each part optional, a rate or a concurrency at least)'
      ],
      [{}, "a queue limit needs a rate or a concurrency cap (clearQueueLimit removes a limit)"],
      [
        { concurency: 5 },
        'unknown field "concurency" in the limit: the fields are rate, burst, concurrency and per_key'
      ],
      [{ concurrency: 0 }, "concurrency must be a whole number >= 1, got 0"],
      [{ concurrency: "5" }, 'concurrency must be a whole number >= 1, got "5"'],
      [{ concurrency: 2.5 }, "concurrency must be a whole number >= 1, got 2.5"],
      [
        { rate: { limit: 10, per: "fortnight" } },
        'rate.per must be a period such as "1s", "500ms", "1m" or a number of milliseconds > 0, got "fortnight"'
      ],
      [
        { rate: { limit: 10 } },
        'rate must be { "limit": <tasks>, "per": <period> } or a text such as "100/s", got {"limit":10}'
      ],
      [{ rate: { limit: 0, per: "1s" } }, "rate.limit must be a whole number >= 1, got 0"],
      [{ rate: "lots" }, 'rate must be <tasks>/<period>, such as "100/s", "5/1m" or "20/500ms", got "lots"'],
      [{ burst: 5, concurrency: 2 }, "burst applies to a rate: give a rate with it"]
    ]
    for (const [body, message] of cases) {
      const r = await send(h, "POST", "/api/queues/low/limit", body)
      expect({ body, status: r.status, error: r.body.error }).toEqual({
        body,
        status: 400,
        error: { code: "InvalidArgument", message }
      })
    }
    expect(await inspect(getQueueLimit("low"))).toEqual({ concurrency: 4 })
  })

  it("an unknown queue: 404 QueueNotFound for set, clear and read, and nothing is written", async () => {
    for (const r of [
      await send(h, "POST", "/api/queues/no-such-queue/limit", { concurrency: 1 }),
      await send(h, "DELETE", "/api/queues/no-such-queue/limit"),
      await get(h, "/api/queues/no-such-queue/limit")
    ]) {
      expect(r.status).toBe(404)
      expect(r.body.error).toEqual({ code: "QueueNotFound", message: 'queue "no-such-queue" does not exist' })
    }
    expect(await inspect(getQueueLimit("no-such-queue"))).toBeUndefined()
    expect((await get(h, "/api/queues")).body.queues.map((q: any) => q.queue)).not.toContain("no-such-queue")
  })

  it("read-only: setting and clearing are refused (403 ActionsDisabled) and change nothing; reading is allowed", async () => {
    await inspect(setQueueLimit("low", { concurrency: 4 }))
    for (const r of [
      await send(readOnly, "POST", "/api/queues/low/limit", { concurrency: 9 }),
      await send(readOnly, "DELETE", "/api/queues/low/limit")
    ]) {
      expect(r.status).toBe(403)
      expect(r.body.error.code).toBe("ActionsDisabled")
      expect(r.body.error.message).toContain("--allow-actions")
    }
    expect(await inspect(getQueueLimit("low"))).toEqual({ concurrency: 4 })
    expect((await get(readOnly, "/api/queues/low/limit")).body).toEqual({ queue: "low", limit: { concurrency: 4 } })
    expect((await queueRow(readOnly, "low")).limit).toEqual({ concurrency: 4 })
  })

  it("refused from another site's page (cross-site Origin) and for a host the dashboard does not answer, changing nothing", async () => {
    await inspect(setQueueLimit("low", { concurrency: 4 }))
    const cross = await send(h, "POST", "/api/queues/low/limit", { concurrency: 9 }, { origin: "https://evil.example" })
    expect(cross.status).toBe(403)
    expect(cross.body.error.code).toBe("CrossSiteRequest")
    const rebound = await h(
      new Request("http://attacker.example:8080/api/queues/low/limit", {
        method: "DELETE",
        headers: { host: "attacker.example:8080" }
      })
    )
    expect(rebound.status).toBe(421)
    expect(await inspect(getQueueLimit("low"))).toEqual({ concurrency: 4 })
  })
})
