/**
 * The dashboard's JSON API: asynqmon's routes and shapes (GET /api/queues, /api/queues/{q},
 * /api/queues/{q}/{state}_tasks, …, the action routes with asynqmon's `:run`, `:archive_all`,
 * `:batch_delete` suffixes), our own routes (a queue's limit; durable workflows under /api/workflows,
 * in the inspector's shapes) and /metrics, each an Effect over the inspector. Whether actions are
 * allowed is decided by the handler (see handler.ts): this file only says which routes are actions.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../../src/broker/Broker.js"
import { archiveAll, deleteAll, runAll } from "../../src/inspector/bulkActions.js"
import { requireQueue } from "../../src/broker/queues.js"
import {
  cancelProcessing,
  clearQueueLimit,
  getQueueLimit,
  pauseQueue,
  setQueueLimit,
  unpauseQueue
} from "../../src/inspector/control.js"
import { deleteQueue } from "../../src/inspector/deleteQueue.js"
import { InvalidArgument } from "../../src/inspector/errors.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { groups } from "../../src/inspector/groups.js"
import { history } from "../../src/inspector/history.js"
import { listTasks } from "../../src/inspector/listTasks.js"
import { getQueueInfo } from "../../src/inspector/queueInfo.js"
import { queues } from "../../src/inspector/queues.js"
import { redisInfo } from "../../src/inspector/redisInfo.js"
import { schedulerEntries, schedulerHistory } from "../../src/inspector/scheduler.js"
import { servers } from "../../src/inspector/servers.js"
import { archiveTask, deleteTask, runTask } from "../../src/inspector/taskActions.js"
import type { BulkState } from "../../src/inspector/types.js"
import { parseRate, type QueueLimit, type RatePeriod } from "../../src/steps/queueLimit.js"
import { prometheusContentType, queueMetricsText } from "../../src/observability/queueMetrics.js"
import type { WorkerDetails } from "../../src/inspector/serverTypes.js"
import { getWorkflowExecution } from "../../src/inspector/getWorkflowExecution.js"
import { workflowExecutionsPage } from "../../src/inspector/listWorkflowExecutions.js"
import { cancelWorkflowExecution, resumeWorkflowExecution } from "../../src/inspector/workflowActions.js"
import {
  type ExecutionStateFilter,
  executionStateFilters,
  listWorkflows,
  type WorkflowInspectOptions
} from "../../src/inspector/workflowTypes.js"
import type { TaskState } from "../../src/wire/keys.js"
import {
  dailyStats,
  enqueueEventJson,
  groupJson,
  limitJson,
  queueSnapshot,
  schedulerEntryJson,
  serverJson,
  taskJson
} from "./asynqmonJson.js"

/** What a route's handler gets: the path's parts, the URL (query) and the request (body). */
export interface RouteInput {
  readonly params: ReadonlyArray<string>
  readonly url: URL
  readonly request: Request
}

export interface Route {
  readonly method: "GET" | "POST" | "DELETE"
  readonly pattern: RegExp
  /** Changes data (run, archive, delete, cancel, pause…): refused unless actions are allowed. */
  readonly action: boolean
  readonly handle: (input: RouteInput) => Effect.Effect<Response, unknown, Broker>
}

export const json = (value: unknown, status = 200): Response =>
  new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }
  })

const noContent = () => new Response(null, { status: 204 })

/** asynqmon's page options: `size` (default 20) and `page` (default 1), whole numbers >= 1. */
const pageOptions = (url: URL) =>
  Effect.gen(function* () {
    const read = (name: string, fallback: number) => {
      const raw = url.searchParams.get(name)
      return raw === null || raw === "" ? fallback : Number(raw)
    }
    const pageSize = read("size", 20)
    const page = read("page", 1)
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
      return yield* new InvalidArgument({
        field: "size",
        message: `size must be a whole number from 1 to 1000, got ${url.searchParams.get("size")}`
      })
    if (!Number.isInteger(page) || page < 1)
      return yield* new InvalidArgument({
        field: "page",
        message: `page must be a whole number >= 1, got ${url.searchParams.get("page")}`
      })
    return { page, pageSize }
  })

/** A batch request's `task_ids` (asynqmon's body): a JSON array of strings. */
const taskIds = (request: Request) =>
  Effect.gen(function* () {
    const body: unknown = yield* Effect.tryPromise({
      try: () => request.json(),
      catch: () => new InvalidArgument({ field: "body", message: 'the body must be JSON: { "task_ids": ["…"] }' })
    })
    const ids = (body as { task_ids?: unknown } | null)?.task_ids
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === "string"))
      return yield* new InvalidArgument({
        field: "task_ids",
        message: 'the body must be { "task_ids": ["…"] } (an array of task ids)'
      })
    if (ids.length > 1000)
      return yield* new InvalidArgument({
        field: "task_ids",
        message: `at most 1000 task ids per batch, got ${ids.length}`
      })
    return ids as ReadonlyArray<string>
  })

const limitBodyHint =
  '{ "rate": { "limit": 100, "per": "1s" }, "burst": 10, "concurrency": 5 } (each part optional, a rate or a concurrency at least)'

/**
 * A set-limit request's body: `{ rate?, burst?, concurrency?, per_key? }` (per_key: `{ rate?, burst?, concurrency? }`), a rate as `{ limit, per }` or a
 * text such as "100/s"; null is the same as leaving a part out. Only the JSON types are checked
 * here (the values are checked by setQueueLimit); an unknown field is refused, since a limit
 * replaces the one before and a misspelt part would silently be removed.
 */
const limitBody = (request: Request) =>
  Effect.gen(function* () {
    const body: unknown = yield* Effect.tryPromise({
      try: () => request.json(),
      catch: () => new InvalidArgument({ field: "body", message: `the body must be JSON: ${limitBodyHint}` })
    })
    if (typeof body !== "object" || body === null || Array.isArray(body))
      return yield* new InvalidArgument({ field: "body", message: `the body must be a JSON object: ${limitBodyHint}` })
    const fields = body as Record<string, unknown>
    for (const key of Object.keys(fields)) {
      if (key !== "rate" && key !== "burst" && key !== "concurrency" && key !== "per_key")
        return yield* new InvalidArgument({
          field: key,
          message: `unknown field ${JSON.stringify(key)} in the limit: the fields are rate, burst, concurrency and per_key`
        })
    }
    const parts = yield* limitParts(fields, "")
    if (fields.per_key === undefined || fields.per_key === null) return parts satisfies QueueLimit
    const pk = fields.per_key
    if (
      typeof pk !== "object" ||
      Array.isArray(pk) ||
      Object.keys(pk as object).some((k) => k !== "rate" && k !== "burst" && k !== "concurrency")
    )
      return yield* new InvalidArgument({
        field: "per_key",
        message: `per_key must be { "rate"?, "burst"?, "concurrency"? }, got ${JSON.stringify(pk)}`
      })
    return { ...parts, perKey: yield* limitParts(pk as Record<string, unknown>, "per_key.") } satisfies QueueLimit
  })

/** The rate, burst and concurrency of a set-limit body (the queue's, or its per_key object's: `prefix` names them). */
const limitParts = (fields: Record<string, unknown>, prefix: string) =>
  Effect.gen(function* () {
    const count = (field: string, value: unknown) =>
      typeof value === "number"
        ? Effect.succeed(value)
        : Effect.fail(
            new InvalidArgument({
              field,
              message: `${field} must be a whole number >= 1, got ${JSON.stringify(value)}`
            })
          )
    const given = (v: unknown) => v !== undefined && v !== null
    let rate: QueueLimit["rate"]
    if (typeof fields.rate === "string") rate = yield* parseRate(fields.rate)
    else if (given(fields.rate)) {
      const r = fields.rate as Record<string, unknown>
      const keys = typeof r === "object" && !Array.isArray(r) ? Object.keys(r) : []
      if (
        typeof r !== "object" ||
        Array.isArray(r) ||
        keys.some((k) => k !== "limit" && k !== "per") ||
        !("limit" in r) ||
        !("per" in r)
      )
        return yield* new InvalidArgument({
          field: `${prefix}rate`,
          message: `${prefix}rate must be { "limit": <tasks>, "per": <period> } or a text such as "100/s", got ${JSON.stringify(fields.rate)}`
        })
      if (typeof r.per !== "string" && typeof r.per !== "number")
        return yield* new InvalidArgument({
          field: `${prefix}rate.per`,
          message: `${prefix}rate.per must be a period such as "1s", "500ms", "1m" or a number of milliseconds > 0, got ${JSON.stringify(r.per)}`
        })
      rate = { limit: yield* count(`${prefix}rate.limit`, r.limit), per: r.per as RatePeriod }
    }
    return {
      ...(rate !== undefined ? { rate } : {}),
      ...(given(fields.burst) ? { burst: yield* count(`${prefix}burst`, fields.burst) } : {}),
      ...(given(fields.concurrency) ? { concurrency: yield* count(`${prefix}concurrency`, fields.concurrency) } : {})
    }
  })

/** Runs `op` on each id; the ids it succeeded on and the ones it failed on (asynqmon's batch answer). */
const eachId = <E>(ids: ReadonlyArray<string>, op: (id: string) => Effect.Effect<unknown, E, Broker>) =>
  Effect.gen(function* () {
    const ok: Array<string> = []
    const failed: Array<string> = []
    for (const id of ids) {
      const result = yield* Effect.result(op(id))
      if (result._tag === "Success") ok.push(id)
      else failed.push(id)
    }
    return { ok, failed }
  })

const decode = (s: string) => decodeURIComponent(s)
const Q = "([^/]+)"

const listStates = ["active", "pending", "scheduled", "retry", "archived", "completed"] as const

/** The workers of live servers, by task id (an active task's start time). */
const workersByTask = Effect.gen(function* () {
  const map = new Map<string, WorkerDetails>()
  for (const s of yield* servers()) for (const w of s.activeWorkers) map.set(w.taskId, w)
  return map
})

const listRoute = (state: TaskState): Route => ({
  method: "GET",
  pattern: new RegExp(`^/api/queues/${Q}/${state}_tasks$`),
  action: false,
  handle: ({ params, url }) =>
    Effect.gen(function* () {
      const queue = decode(params[0]!)
      const paging = yield* pageOptions(url)
      const info = yield* getQueueInfo(queue)
      const tasks = yield* listTasks(queue, state, paging)
      const now = yield* Clock.currentTimeMillis
      const workers = state === "active" ? yield* workersByTask : new Map<string, WorkerDetails>()
      return json({ tasks: tasks.map((t) => taskJson(t, now, workers.get(t.id))), stats: queueSnapshot(info) })
    })
})

type BulkOp = typeof runAll
const bulkOps: Record<"run" | "archive" | "delete", { readonly op: BulkOp; readonly field: string }> = {
  run: { op: runAll, field: "scheduled" },
  archive: { op: archiveAll, field: "archived" },
  delete: { op: deleteAll, field: "deleted" }
}
const oneOps = { run: runTask, archive: archiveTask, delete: deleteTask } as const
const batchFields = {
  run: ["pending_ids", "error_ids"],
  archive: ["archived_ids", "error_ids"],
  delete: ["deleted_ids", "failed_ids"]
} as const

/** The action routes of one state (and of a group's aggregating tasks): one task, all, a batch. */
const actionRoutes = (state: BulkState, verbs: ReadonlyArray<"run" | "archive" | "delete">): Array<Route> => {
  const prefix =
    state === "aggregating" ? `^/api/queues/${Q}/groups/${Q}/aggregating_tasks` : `^/api/queues/${Q}/${state}_tasks`
  const target = (params: ReadonlyArray<string>) =>
    state === "aggregating"
      ? { queue: decode(params[0]!), group: decode(params[1]!), rest: params.slice(2) }
      : { queue: decode(params[0]!), group: undefined, rest: params.slice(1) }
  const out: Array<Route> = []
  for (const verb of verbs) {
    out.push({
      method: verb === "delete" ? "DELETE" : "POST",
      pattern: new RegExp(`${prefix}/([^/:]+)${verb === "delete" ? "" : `:${verb}`}$`),
      action: true,
      handle: ({ params }) =>
        Effect.gen(function* () {
          const { queue, rest } = target(params)
          yield* oneOps[verb](queue, decode(rest[0]!))
          return noContent()
        })
    })
    out.push({
      method: verb === "delete" ? "DELETE" : "POST",
      pattern: new RegExp(`${prefix}:${verb}_all$`),
      action: true,
      handle: ({ params }) =>
        Effect.gen(function* () {
          const { queue, group } = target(params)
          const n = yield* bulkOps[verb].op(queue, state, group === undefined ? {} : { group })
          return json({ [bulkOps[verb].field]: n })
        })
    })
    out.push({
      method: "POST",
      pattern: new RegExp(`${prefix}:batch_${verb}$`),
      action: true,
      handle: ({ params, request }) =>
        Effect.gen(function* () {
          const { queue } = target(params)
          const ids = yield* taskIds(request)
          const { ok, failed } = yield* eachId(ids, (id) => oneOps[verb](queue, id))
          const [okField, failedField] = batchFields[verb]
          return json({ [okField]: ok, [failedField]: failed })
        })
    })
  }
  return out
}

/** Cancels every active task of a queue (asynqmon's cancel_all): a signal per task, best effort. */
const cancelAllActive = (queue: string) =>
  Effect.gen(function* () {
    const pageSize = 100
    for (let page = 1; ; page++) {
      const tasks = yield* listTasks(queue, "active", { page, pageSize })
      for (const t of tasks) yield* cancelProcessing(t.id)
      if (tasks.length < pageSize) return
    }
  })

/**
 * Where the workflows' executions are (the engine layer's `queue` and `shards`): `?prefix=` (default
 * "workflow") and `?shards=` (default: the control queues registered in asynq:queues), as the CLI's
 * `--prefix` and `--shards`.
 */
const workflowWhere = (url: URL) =>
  Effect.gen(function* () {
    const prefix = url.searchParams.get("prefix")
    const shards = url.searchParams.get("shards")
    if (shards !== null && shards !== "" && !/^\d+$/.test(shards))
      return yield* new InvalidArgument({
        field: "shards",
        message: `shards must be a whole number from 1 to 1024, got ${shards}`
      })
    return {
      queue: prefix === null || prefix === "" ? "workflow" : prefix,
      shards: shards === null || shards === "" ? undefined : Number(shards)
    } satisfies WorkflowInspectOptions
  })

/** `?state=`: one of the listing's state filters, or none. */
const stateFilter = (url: URL) =>
  Effect.gen(function* () {
    const state = url.searchParams.get("state")
    if (state === null || state === "") return undefined
    if (!(executionStateFilters as ReadonlyArray<string>).includes(state))
      return yield* new InvalidArgument({
        field: "state",
        message: `state must be one of ${executionStateFilters.join(", ")}, got ${JSON.stringify(state)}`
      })
    return state as ExecutionStateFilter
  })

/** The workflow routes (ours, not asynqmon's): workflows, a page of executions, one execution, resume and cancel. */
const workflowRoutes: ReadonlyArray<Route> = [
  {
    method: "GET",
    pattern: /^\/api\/workflows$/,
    action: false,
    handle: ({ url }) =>
      Effect.gen(function* () {
        const where = yield* workflowWhere(url)
        const workflows = yield* listWorkflows({ queue: where.queue })
        return json({ prefix: where.queue, workflows })
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/workflows/${Q}/executions$`),
    action: false,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        const workflow = decode(params[0]!)
        const where = yield* workflowWhere(url)
        const paging = yield* pageOptions(url)
        const state = yield* stateFilter(url)
        const page = yield* workflowExecutionsPage(workflow, {
          ...where,
          ...paging,
          ...(state === undefined ? {} : { state })
        })
        return json({ workflow, ...page })
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/workflows/${Q}/executions/${Q}$`),
    action: false,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        const where = yield* workflowWhere(url)
        return json(yield* getWorkflowExecution(decode(params[0]!), decode(params[1]!), where))
      })
  },
  ...(
    [
      ["resume", resumeWorkflowExecution],
      ["cancel", cancelWorkflowExecution]
    ] as const
  ).map(
    ([verb, op]): Route => ({
      method: "POST",
      pattern: new RegExp(`^/api/workflows/${Q}/executions/([^/]+):${verb}$`),
      action: true,
      handle: ({ params, url }) =>
        Effect.gen(function* () {
          const workflow = decode(params[0]!)
          const where = yield* workflowWhere(url)
          const result = yield* op(workflow, decode(params[1]!), where)
          return json({ workflow, action: verb, ...result })
        })
    })
  )
]

export const routes: ReadonlyArray<Route> = [
  ...workflowRoutes,
  {
    method: "GET",
    pattern: /^\/api\/queues$/,
    action: false,
    handle: () =>
      Effect.gen(function* () {
        const names = yield* queues()
        // A queue deleted between the listing and its read is left out; any other failure fails the call.
        const infos = yield* Effect.forEach(
          names,
          (q) => getQueueInfo(q).pipe(Effect.catchTag("QueueNotFound", () => Effect.succeed(undefined))),
          { concurrency: 4 }
        )
        return json({ queues: infos.flatMap((i) => (i === undefined ? [] : [queueSnapshot(i)])) })
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/queues/${Q}$`),
    action: false,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        const queue = decode(params[0]!)
        const days = Number(url.searchParams.get("days") ?? "10")
        if (!Number.isInteger(days) || days < 1 || days > 90)
          return yield* new InvalidArgument({
            field: "days",
            message: `days must be a whole number from 1 to 90, got ${url.searchParams.get("days")}`
          })
        const current = yield* getQueueInfo(queue)
        const past = yield* history(queue, days)
        return json({ current: queueSnapshot(current), history: past.map(dailyStats) })
      })
  },
  {
    method: "GET",
    pattern: /^\/api\/queue_stats$/,
    action: false,
    handle: () =>
      Effect.gen(function* () {
        const stats: Record<string, unknown> = {}
        for (const q of yield* queues()) stats[q] = (yield* history(q, 90)).map(dailyStats)
        return json({ stats })
      })
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/api/queues/${Q}$`),
    action: true,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        yield* deleteQueue(decode(params[0]!), { force: url.searchParams.get("force") === "true" })
        return noContent()
      })
  },
  {
    method: "POST",
    pattern: /^\/api\/queues\/([^/:]+):pause$/,
    action: true,
    handle: ({ params }) => Effect.as(pauseQueue(decode(params[0]!)), noContent())
  },
  {
    method: "POST",
    pattern: /^\/api\/queues\/([^/:]+):resume$/,
    action: true,
    handle: ({ params }) => Effect.as(unpauseQueue(decode(params[0]!)), noContent())
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/queues/${Q}/limit$`),
    action: false,
    handle: ({ params }) =>
      Effect.gen(function* () {
        const queue = decode(params[0]!)
        yield* requireQueue(queue)
        const limit = yield* getQueueLimit(queue)
        return json({ queue, limit: limit ? limitJson(limit) : null })
      })
  },
  {
    method: "POST",
    pattern: new RegExp(`^/api/queues/${Q}/limit$`),
    action: true,
    handle: ({ params, request }) =>
      Effect.gen(function* () {
        const queue = decode(params[0]!)
        const stored = yield* setQueueLimit(queue, yield* limitBody(request))
        return json({ queue, limit: limitJson(stored) })
      })
  },
  {
    method: "DELETE",
    pattern: new RegExp(`^/api/queues/${Q}/limit$`),
    action: true,
    handle: ({ params }) => Effect.as(clearQueueLimit(decode(params[0]!)), noContent())
  },
  ...listStates.map(listRoute),
  {
    method: "GET",
    pattern: new RegExp(`^/api/queues/${Q}/groups/${Q}/aggregating_tasks$`),
    action: false,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        const queue = decode(params[0]!)
        const group = decode(params[1]!)
        const paging = yield* pageOptions(url)
        const info = yield* getQueueInfo(queue)
        const tasks = yield* listTasks(queue, "aggregating", { ...paging, group })
        const gs = yield* groups(queue)
        const now = yield* Clock.currentTimeMillis
        return json({
          tasks: tasks.map((t) => taskJson(t, now)),
          stats: queueSnapshot(info),
          groups: gs.map(groupJson)
        })
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/queues/${Q}/groups$`),
    action: false,
    handle: ({ params }) =>
      Effect.gen(function* () {
        const queue = decode(params[0]!)
        const info = yield* getQueueInfo(queue)
        const gs = yield* groups(queue)
        return json({ stats: queueSnapshot(info), groups: gs.map(groupJson) })
      })
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/queues/${Q}/tasks/${Q}$`),
    action: false,
    handle: ({ params }) =>
      Effect.gen(function* () {
        const t = yield* getTaskInfo(decode(params[0]!), decode(params[1]!))
        const workers = t.state === "active" ? yield* workersByTask : new Map<string, WorkerDetails>()
        return json(taskJson(t, yield* Clock.currentTimeMillis, workers.get(t.id)))
      })
  },
  {
    method: "POST",
    pattern: new RegExp(`^/api/queues/${Q}/active_tasks/([^/:]+):cancel$`),
    action: true,
    handle: ({ params }) => Effect.as(cancelProcessing(decode(params[1]!)), noContent())
  },
  {
    method: "POST",
    pattern: new RegExp(`^/api/queues/${Q}/active_tasks:cancel_all$`),
    action: true,
    handle: ({ params }) => Effect.as(cancelAllActive(decode(params[0]!)), noContent())
  },
  {
    method: "POST",
    pattern: new RegExp(`^/api/queues/${Q}/active_tasks:batch_cancel$`),
    action: true,
    handle: ({ request }) =>
      Effect.gen(function* () {
        const { ok, failed } = yield* eachId(yield* taskIds(request), (id) => cancelProcessing(id))
        return json({ canceled_ids: ok, error_ids: failed })
      })
  },
  ...actionRoutes("pending", ["delete", "archive"]),
  ...actionRoutes("scheduled", ["delete", "run", "archive"]),
  ...actionRoutes("retry", ["delete", "run", "archive"]),
  ...actionRoutes("archived", ["delete", "run"]),
  ...actionRoutes("completed", ["delete"]),
  ...actionRoutes("aggregating", ["delete", "run", "archive"]),
  {
    method: "GET",
    pattern: /^\/api\/servers$/,
    action: false,
    handle: () => Effect.map(servers(), (list) => json({ servers: list.map(serverJson) }))
  },
  {
    method: "GET",
    pattern: /^\/api\/scheduler_entries$/,
    action: false,
    handle: () => Effect.map(schedulerEntries(), (list) => json({ entries: list.map(schedulerEntryJson) }))
  },
  {
    method: "GET",
    pattern: new RegExp(`^/api/scheduler_entries/${Q}/enqueue_events$`),
    action: false,
    handle: ({ params, url }) =>
      Effect.gen(function* () {
        const paging = yield* pageOptions(url)
        const events = yield* schedulerHistory(decode(params[0]!), paging)
        return json({ events: events.map(enqueueEventJson) })
      })
  },
  {
    method: "GET",
    pattern: /^\/api\/redis_info$/,
    action: false,
    handle: () =>
      Effect.map(redisInfo(), (nodes) =>
        nodes.length === 1 && nodes[0]!.address === ""
          ? json({ address: "", info: nodes[0]!.info, raw_info: nodes[0]!.raw, cluster: false })
          : json({
              address: "",
              info: nodes[0]?.info ?? {},
              raw_info: nodes.map((n) => n.raw).join("\n"),
              cluster: true,
              nodes: nodes.map((n) => ({ address: n.address, info: n.info }))
            })
      )
  },
  {
    method: "GET",
    pattern: /^\/metrics$/,
    action: false,
    handle: () =>
      Effect.map(
        queueMetricsText(),
        (text) =>
          new Response(text, {
            status: 200,
            headers: { "content-type": prometheusContentType, "cache-control": "no-store" }
          })
      )
  }
]

/** The route for a method and path: a match, "wrong method" (with the allowed ones), or none. */
export const findRoute = (
  method: string,
  path: string
):
  | { readonly route: Route; readonly params: ReadonlyArray<string> }
  | { readonly allowed: ReadonlyArray<string> }
  | undefined => {
  const allowed = new Set<string>()
  for (const route of routes) {
    const m = route.pattern.exec(path)
    if (m === null) continue
    if (route.method === method || (method === "HEAD" && route.method === "GET")) return { route, params: m.slice(1) }
    allowed.add(route.method)
  }
  return allowed.size > 0 ? { allowed: [...allowed] } : undefined
}
