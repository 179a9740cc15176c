/**
 * The dashboard's browser script, served at /assets/app.js: a small hash router rendering each
 * view from the JSON API (asynqmon's, see ../asynqmonJson.ts) with plain DOM calls (text goes in as
 * text, never as HTML). Type-checked with the DOM library (./tsconfig.json) and bundled by esbuild
 * at build time (./embed.mjs) into ../assets/app.generated.ts, the string pages.ts serves.
 */

// ---- the JSON the views read (the fields they use) ----

interface DashConfig {
  readonly allowActions: boolean
  readonly basePath: string
}
/** A queue's flow-control limit (ours, not asynqmon's): present on a queue's row only when it has one. */
interface RateJson {
  readonly limit: number
  readonly per_ms: number
  readonly interval_ms: number
  readonly burst: number
}
interface LimitJson {
  readonly rate?: RateJson
  readonly concurrency?: number
  /** The per-key parts (each limit key of the queue). */
  readonly per_key?: { readonly rate?: RateJson; readonly concurrency?: number }
}
interface QueueRow {
  readonly queue: string
  readonly paused: boolean
  readonly size: number
  readonly active: number
  readonly pending: number
  readonly aggregating: number
  readonly scheduled: number
  readonly retry: number
  readonly archived: number
  readonly completed: number
  readonly processed: number
  readonly failed: number
  readonly processed_total: number
  readonly failed_total: number
  readonly display_latency: string
  readonly memory_usage_bytes: number
  readonly limit?: LimitJson
  /** Ours: when the queue's hold (RateLimited with holdQueue) ends, ISO; present only while it is held. */
  readonly held_until?: string
}
interface DayStats {
  readonly date: string
  readonly processed: number
  readonly failed: number
}
interface TaskRow {
  readonly id: string
  readonly type: string
  readonly payload: string
  readonly queue: string
  readonly state: TaskState
  readonly start_time: string
  readonly next_process_at: string
  readonly retried: number
  readonly max_retry: number
  readonly error_message: string
  readonly last_failed_at: string
  readonly completed_at: string
  readonly result: string
  readonly timeout_seconds: number
  readonly deadline: string
  readonly group: string
  readonly ttl_seconds: number
  readonly is_orphaned: boolean
  readonly trace_id: string
  readonly headers: Readonly<Record<string, string>> | null
}
interface GroupRow {
  readonly group: string
  readonly size: number
}
interface WorkerRow {
  readonly task_id: string
  readonly task_type: string
  readonly task_payload: string
  readonly queue: string
  readonly start_time: string
  readonly deadline: string
}
interface ServerRow {
  readonly id: string
  readonly host: string
  readonly pid: number
  readonly status: string
  readonly concurrency: number
  readonly queue_priorities: Readonly<Record<string, number>>
  readonly strict_priority_enabled: boolean
  readonly start_time: string
  readonly active_workers: ReadonlyArray<WorkerRow>
}
interface EntryRow {
  readonly id: string
  readonly spec: string
  readonly task_type: string
  readonly task_payload: string
  readonly options: ReadonlyArray<string>
  readonly next_enqueue_at: string
  readonly prev_enqueue_at: string
}
interface BatchResult {
  readonly pending_ids?: ReadonlyArray<string>
  readonly archived_ids?: ReadonlyArray<string>
  readonly deleted_ids?: ReadonlyArray<string>
  readonly error_ids?: ReadonlyArray<string>
  readonly failed_ids?: ReadonlyArray<string>
}
interface BulkResult {
  readonly deleted?: number
  readonly archived?: number
  readonly scheduled?: number
}

type TaskState = "active" | "pending" | "aggregating" | "scheduled" | "retry" | "archived" | "completed"
type Method = "GET" | "POST" | "DELETE"
type Child = Node | string | number | false | null | undefined | ReadonlyArray<Child>
type Attrs = Record<string, string | number | boolean | null | undefined | ((e: Event) => void)>

/** An API failure: the server's message, HTTP status and error code. */
class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined
  ) {
    super(message)
  }
}

const byId = (id: string): HTMLElement => {
  const node = document.getElementById(id)
  if (node === null) throw new Error(`the page has no #${id}`)
  return node
}

const config = JSON.parse(byId("dash-config").textContent ?? "{}") as DashConfig
const base = config.basePath
const main = byId("main")
const nav = byId("nav")
const STATES: ReadonlyArray<TaskState> = [
  "active",
  "pending",
  "aggregating",
  "scheduled",
  "retry",
  "archived",
  "completed"
]
const READ_ONLY_TITLE = "read-only: start the dashboard with --allow-actions to do this"

const isState = (s: string | undefined): s is TaskState => STATES.includes(s as TaskState)

/** A two-column table of `keys` and their values (monospaced), with a test id. */
function keyValueTable(
  testId: string,
  keys: ReadonlyArray<string>,
  value: (key: string) => string | undefined
): HTMLTableElement {
  return el(
    "table",
    { "data-testid": testId },
    el(
      "tbody",
      {},
      keys.map((k) => el("tr", {}, el("th", { text: k }), el("td", { className: "mono", text: value(k) })))
    )
  )
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs,
  ...children: Array<Child>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k]
      if (v === undefined || v === null || v === false) continue
      if (k === "text") node.textContent = String(v)
      else if (k === "onclick" && typeof v === "function") node.addEventListener("click", v)
      else if (k === "className") node.className = String(v)
      else node.setAttribute(k, v === true ? "" : String(v))
    }
  }
  const add = (c: Child): void => {
    if (c === undefined || c === null || c === false) return
    if (Array.isArray(c)) (c as ReadonlyArray<Child>).forEach(add)
    else
      node.appendChild(
        typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : (c as Node)
      )
  }
  children.forEach(add)
  return node
}
const enc = (s: string): string => encodeURIComponent(s)
const link = (href: string, text: string, attrs?: Attrs): HTMLAnchorElement => {
  const a = el("a", attrs ?? {}, text)
  a.setAttribute("href", href)
  return a
}
const fmtBytes = (bytes: number): string => {
  if (bytes < 1000) return `${bytes} B`
  const units = ["kB", "MB", "GB", "TB"]
  let n = bytes
  let i = -1
  do {
    n = n / 1000
    i++
  } while (n >= 1000 && i < units.length - 1)
  return `${n.toFixed(1)} ${units[i]}`
}
const fmtTime = (s: string | undefined): string => (s ? s.replace("T", " ").replace("Z", " UTC") : "—")
const periodText = (ms: number): string =>
  ms === 1000 ? "s" : ms === 60_000 ? "m" : ms === 3_600_000 ? "h" : `${ms}ms`
/** A period as the limit form's text: `1s`, `10m`, `1h`, `500ms` (what the API reads back). */
const periodInput = (ms: number): string =>
  ms % 3_600_000 === 0
    ? `${ms / 3_600_000}h`
    : ms % 60_000 === 0
      ? `${ms / 60_000}m`
      : ms % 1000 === 0
        ? `${ms / 1000}s`
        : `${ms}ms`
/** A queue's limit in one line, as the CLI writes it: `100/s (burst 5), concurrency 5`, or `none`. */
const limitText = (limit: LimitJson | undefined): string => {
  const parts: Array<string> = []
  if (limit?.rate) parts.push(`${limit.rate.limit}/${periodText(limit.rate.per_ms)} (burst ${limit.rate.burst})`)
  if (limit?.concurrency !== undefined) parts.push(`concurrency ${limit.concurrency}`)
  const perKey = limit?.per_key
  if (perKey) {
    const keyParts: Array<string> = []
    if (perKey.rate)
      keyParts.push(`${perKey.rate.limit}/${periodText(perKey.rate.per_ms)} (burst ${perKey.rate.burst})`)
    if (perKey.concurrency !== undefined) keyParts.push(`concurrency ${perKey.concurrency}`)
    parts.push(`per key: ${keyParts.join(", ")}`)
  }
  return parts.length > 0 ? parts.join(", ") : "none"
}
const card = (label: string, value: string, testid?: string): HTMLDivElement =>
  el(
    "div",
    { className: "card" },
    el("div", { className: "label", text: label }),
    el("div", { className: "value", text: value, "data-testid": testid })
  )
const notice = (text: string, isError?: boolean): HTMLDivElement =>
  el("div", { className: `notice${isError ? " error" : ""}`, role: isError ? "alert" : "status", text })
const headRow = (heads: ReadonlyArray<string>): HTMLTableRowElement =>
  el(
    "tr",
    {},
    heads.map((h) => el("th", { text: h }))
  )
/** A table with a test id, a header row of `heads` and the rows given (null rows left out). */
const dataTable = (
  testId: string,
  heads: ReadonlyArray<string>,
  rows: ReadonlyArray<HTMLTableRowElement | null>
): HTMLTableElement => el("table", { "data-testid": testId }, el("thead", {}, headRow(heads)), el("tbody", {}, rows))
/** A titled part of a page: its table, or a muted line saying there is nothing when it has no rows. */
const titledTable = (
  frag: Node,
  title: string,
  empty: string,
  testId: string,
  heads: ReadonlyArray<string>,
  rows: ReadonlyArray<HTMLTableRowElement | null>
) => {
  frag.appendChild(el("h2", { text: title }))
  frag.appendChild(
    rows.some((r) => r !== null) ? dataTable(testId, heads, rows) : el("p", { className: "muted", text: empty })
  )
}

function api<A = unknown>(method: Method, path: string, body?: unknown): Promise<A> {
  const headers: Record<string, string> = { accept: "application/json" }
  const init: RequestInit = { method, headers, credentials: "same-origin" }
  if (body !== undefined) {
    headers["content-type"] = "application/json"
    init.body = JSON.stringify(body)
  }
  return fetch(base + path, init).then((res) => {
    if (res.status === 204) return {} as A
    return res.text().then((text) => {
      let data: { error?: { message?: string; code?: string } } | null = null
      try {
        data = text ? JSON.parse(text) : {}
      } catch {
        data = { error: { message: text } }
      }
      if (!res.ok) throw new ApiError(data?.error?.message || `HTTP ${res.status}`, res.status, data?.error?.code)
      return data as A
    })
  })
}

interface ActionOptions {
  readonly name?: string
  readonly title?: string
  readonly danger?: boolean
  readonly confirm?: string
}

/** An action button: disabled (with the reason) on a read-only dashboard. */
function actionButton(
  label: string,
  onRun: () => Promise<string | undefined> | string | undefined,
  opts: ActionOptions = {}
): HTMLButtonElement {
  const b = el("button", {
    className: opts.danger ? "danger" : "",
    "data-action": opts.name || label,
    title: config.allowActions ? opts.title || label : READ_ONLY_TITLE,
    text: label
  })
  if (!config.allowActions) b.disabled = true
  b.addEventListener("click", () => {
    if (opts.confirm && !window.confirm(opts.confirm)) return
    b.disabled = true
    Promise.resolve()
      .then(onRun)
      .then(
        (msg) => {
          flash(msg || `${label}: done`, false)
          void render()
        },
        (e: Error) => {
          main.insertBefore(notice(`${label} failed: ${e.message}`, true), main.firstChild)
          b.disabled = !config.allowActions
        }
      )
  })
  return b
}
let pendingFlash: { readonly text: string; readonly isError: boolean } | null = null
const flash = (text: string, isError: boolean): void => {
  pendingFlash = { text, isError }
}

function setNav(current: string): void {
  nav.textContent = ""
  const items: ReadonlyArray<readonly [string, string, string]> = [
    ["#/", "Queues", "queues"],
    ["#/groups", "Groups", "groups"],
    ["#/servers", "Servers", "servers"],
    ["#/scheduler", "Scheduler", "scheduler"],
    ["#/workflows", "Workflows", "workflows"],
    ["#/redis", "Redis", "redis"]
  ]
  for (const [href, text, name] of items)
    nav.appendChild(link(href, text, { className: current === name ? "active" : "", "data-testid": `nav-${name}` }))
}

/** Processed and failed per day; `days` newest first, drawn oldest to newest. */
function chart(days: ReadonlyArray<DayStats>): HTMLDivElement {
  const data = days.slice().reverse()
  const w = 600
  const h = 160
  const pad = 28
  let max = 1
  for (const d of data) max = Math.max(max, d.processed, d.failed)
  const ns = "http://www.w3.org/2000/svg"
  const svgEl = <K extends keyof SVGElementTagNameMap>(
    tag: K,
    attrs: Record<string, string | number>
  ): SVGElementTagNameMap[K] => {
    const node = document.createElementNS(ns, tag)
    for (const k in attrs) node.setAttribute(k, String(attrs[k]))
    return node
  }
  const svg = svgEl("svg", {
    viewBox: `0 0 ${w} ${h + 20}`,
    role: "img",
    "aria-label": "processed and failed tasks per day",
    "data-testid": "history-chart"
  })
  const x = (i: number) => pad + (data.length <= 1 ? 0 : (i * (w - 2 * pad)) / (data.length - 1))
  const y = (v: number) => h - (v / max) * (h - 10)
  const line = (key: "processed" | "failed", color: string) => {
    const points = data.map((d, i) => `${x(i)},${y(d[key])}`).join(" ")
    svg.appendChild(svgEl("polyline", { fill: "none", stroke: color, "stroke-width": "2", points, "data-series": key }))
    data.forEach((d, i) => {
      const c = svgEl("circle", { cx: x(i), cy: y(d[key]), r: "3", fill: color })
      const t = svgEl("title", {})
      t.textContent = `${d.date}: ${d[key]} ${key}`
      c.appendChild(t)
      svg.appendChild(c)
    })
  }
  svg.appendChild(svgEl("line", { x1: pad, x2: w - pad, y1: h, y2: h, stroke: "#c5cad3" }))
  const top = svgEl("text", { x: 2, y: 12, "font-size": "10", fill: "#667085" })
  top.textContent = String(max)
  svg.appendChild(top)
  data.forEach((d, i) => {
    if (data.length > 8 && i % Math.ceil(data.length / 8) !== 0 && i !== data.length - 1) return
    const t = svgEl("text", { x: x(i), y: h + 14, "font-size": "10", "text-anchor": "middle", fill: "#667085" })
    t.textContent = d.date.slice(5)
    svg.appendChild(t)
  })
  line("processed", "#3457d5")
  line("failed", "#c62828")
  return el(
    "div",
    { className: "chart" },
    svg,
    el(
      "div",
      { className: "legend" },
      el("span", { className: "p", text: "— processed" }),
      "  ",
      el("span", { className: "f", text: "— failed" }),
      " (per UTC day)"
    )
  )
}

// ---- views ----

const pauseOrResume = (
  q: string,
  paused: boolean,
  labels: readonly [string, string],
  done: readonly [string, string]
): HTMLButtonElement =>
  paused
    ? actionButton(labels[1], () => api("POST", `/api/queues/${enc(q)}:resume`).then(() => done[1]), { name: "resume" })
    : actionButton(labels[0], () => api("POST", `/api/queues/${enc(q)}:pause`).then(() => done[0]), { name: "pause" })

/**
 * A queue's limit as a form: rate (tasks per period), burst, concurrency cap, and the same three per
 * limit key, pre-filled with the limit it has; Set replaces the limit (an empty part is removed),
 * Clear removes it. The server checks the values (setQueueLimit, as for the CLI) and says what is
 * wrong. Disabled, saying why, on a read-only dashboard.
 */
function limitForm(q: string, limit: LimitJson | undefined): HTMLFormElement {
  const numberInput = (name: string, value: number | undefined, placeholder: string, label: string): HTMLInputElement =>
    el("input", {
      type: "number",
      min: 1,
      step: 1,
      name,
      value: value ?? "",
      placeholder,
      "aria-label": label,
      "data-testid": `limit-${name}`
    })
  const perInput = (name: string, rate: RateJson | undefined, label: string): HTMLInputElement =>
    el("input", {
      type: "text",
      name,
      value: rate ? periodInput(rate.per_ms) : "1s",
      placeholder: "1s",
      "aria-label": label,
      "data-testid": `limit-${name}`
    })
  const rate = numberInput("rate", limit?.rate?.limit, "none", "tasks per period")
  const per = perInput("per", limit?.rate, "period (1s, 500ms, 1m, 1h)")
  const burst = numberInput("burst", limit?.rate?.burst, "default", "burst")
  const concurrency = numberInput("concurrency", limit?.concurrency, "no cap", "concurrency cap")
  const perKey = limit?.per_key
  const keyRate = numberInput("key-rate", perKey?.rate?.limit, "none", "tasks of one limit key per period")
  const keyPer = perInput("key-per", perKey?.rate, "per-key period (1s, 500ms, 1m, 1h)")
  const keyBurst = numberInput("key-burst", perKey?.rate?.burst, "default", "per-key burst")
  const keyConcurrency = numberInput("key-concurrency", perKey?.concurrency, "no cap", "per-key concurrency cap")
  const numberIn = (input: HTMLInputElement, label: string): number | undefined => {
    if (input.validity.badInput) throw new Error(`${label} must be a whole number`)
    return input.value.trim() === "" ? undefined : Number(input.value)
  }
  const set = actionButton(
    "Set limit",
    () => {
      // The parts as the API takes them (the same ones as the CLI's flags); the server checks them.
      const parts = (
        rateIn: HTMLInputElement,
        perIn: HTMLInputElement,
        burstIn: HTMLInputElement,
        capIn: HTMLInputElement,
        what: string
      ): Record<string, unknown> => {
        const out: Record<string, unknown> = {}
        const n = numberIn(rateIn, `the ${what}rate`)
        if (n !== undefined) out.rate = { limit: n, per: perIn.value.trim() === "" ? "1s" : perIn.value.trim() }
        const b = numberIn(burstIn, `the ${what}burst`)
        if (b !== undefined) out.burst = b
        const c = numberIn(capIn, `the ${what}concurrency`)
        if (c !== undefined) out.concurrency = c
        return out
      }
      const body = parts(rate, per, burst, concurrency, "")
      const keyParts = parts(keyRate, keyPer, keyBurst, keyConcurrency, "per-key ")
      if (Object.keys(keyParts).length > 0) body.per_key = keyParts
      if (Object.keys(body).length === 0)
        throw new Error("give a rate, a concurrency cap or a per-key part (Clear limit removes the limit)")
      return api<{ limit: LimitJson }>("POST", `/api/queues/${enc(q)}/limit`, body).then(
        (res) => `limit of ${q} set: ${limitText(res.limit)}`
      )
    },
    { name: "set-limit" }
  )
  const clear = actionButton(
    "Clear limit",
    () => api("DELETE", `/api/queues/${enc(q)}/limit`).then(() => `limit of ${q} cleared: it is unlimited`),
    { name: "clear-limit" }
  )
  set.type = "button"
  clear.type = "button"
  const form = el(
    "form",
    { className: "limit-form", "data-testid": "limit-form" },
    el(
      "fieldset",
      { disabled: !config.allowActions, title: config.allowActions ? undefined : READ_ONLY_TITLE },
      el("legend", { text: "Limit" }),
      el("label", {}, "Rate ", rate, " per ", per),
      el("label", {}, "Burst ", burst),
      el("label", {}, "Concurrency ", concurrency),
      el("span", { className: "limit-per-key", text: "Per limit key:" }),
      el("label", {}, "Rate ", keyRate, " per ", keyPer),
      el("label", {}, "Burst ", keyBurst),
      el("label", {}, "Concurrency ", keyConcurrency),
      set,
      clear
    ),
    el("p", {
      className: "muted",
      text: "Applied by effect-asynq workers where they lease tasks, across all of them (Go asynq servers do not see it). The per-key parts hold each limit key (tasks enqueued with limitKey) on its own. Leave a part empty to have none of it; a burst defaults to 50 ms of its rate."
    })
  )
  form.addEventListener("submit", (e) => {
    e.preventDefault()
    if (config.allowActions && !set.disabled) set.click()
  })
  return form
}

function viewQueues(): Promise<Node> {
  setNav("queues")
  return Promise.all([
    api<{ queues: ReadonlyArray<QueueRow> }>("GET", "/api/queues"),
    api<{ stats: Readonly<Record<string, ReadonlyArray<DayStats>>> }>("GET", "/api/queue_stats")
  ]).then(([{ queues }, { stats }]) => {
    const frag = el("div", {}, el("h1", { text: "Queues" }))
    if (queues.length === 0) {
      frag.appendChild(notice("No queues yet: nothing has been enqueued on this Redis."))
      return frag
    }
    const totals: Record<string, { date: string; processed: number; failed: number }> = {}
    for (const q of Object.keys(stats)) {
      for (const d of (stats[q] ?? []).slice(0, 14)) {
        totals[d.date] ??= { date: d.date, processed: 0, failed: 0 }
        const t = totals[d.date]!
        t.processed += d.processed
        t.failed += d.failed
      }
    }
    const days = Object.keys(totals)
      .sort()
      .reverse()
      .map((k) => totals[k]!)
    const heads = [
      "Queue",
      "State",
      "Size",
      "Active",
      "Pending",
      "Aggregating",
      "Scheduled",
      "Retry",
      "Archived",
      "Completed",
      "Processed today",
      "Failed today",
      "Latency",
      "Memory",
      "Limit",
      ""
    ]
    const head = el(
      "tr",
      {},
      heads.map((h, i) => el("th", { className: i >= 2 && i <= 11 ? "num" : "", text: h }))
    )
    const num = (n: number) => el("td", { className: "num", text: n })
    const rows = queues.map((q) =>
      el(
        "tr",
        { "data-queue": q.queue },
        el("td", {}, link(`#/queues/${enc(q.queue)}/pending`, q.queue, { "data-testid": "queue-link" })),
        el(
          "td",
          {},
          el("span", {
            className: `badge ${q.paused ? "paused" : "run"}`,
            text: q.paused ? "paused" : "run",
            "data-testid": "queue-state"
          })
        ),
        [
          q.size,
          q.active,
          q.pending,
          q.aggregating,
          q.scheduled,
          q.retry,
          q.archived,
          q.completed,
          q.processed,
          q.failed
        ].map(num),
        el("td", { text: q.display_latency }),
        el("td", { text: fmtBytes(q.memory_usage_bytes) }),
        el("td", {
          className: q.limit || q.held_until ? "" : "muted",
          text: q.held_until ? `${limitText(q.limit)}; held until ${fmtTime(q.held_until)}` : limitText(q.limit),
          "data-testid": "queue-limit"
        }),
        el(
          "td",
          {},
          pauseOrResume(q.queue, q.paused, ["Pause", "Resume"], [`queue ${q.queue} paused`, `queue ${q.queue} resumed`])
        )
      )
    )
    frag.appendChild(el("table", { "data-testid": "queues-table" }, el("thead", {}, head), el("tbody", {}, rows)))
    frag.appendChild(el("h2", { text: "Processed and failed, all queues (last 14 days)" }))
    frag.appendChild(chart(days))
    return frag
  })
}

function taskRow(q: string, state: TaskState, t: TaskRow, selected: Set<string>): HTMLTableRowElement {
  const cells: Array<HTMLTableCellElement> = []
  if (config.allowActions && state !== "active") {
    const box = el("input", { type: "checkbox", "aria-label": `select ${t.id}` })
    box.checked = selected.has(t.id)
    box.addEventListener("change", () => {
      if (box.checked) selected.add(t.id)
      else selected.delete(t.id)
    })
    cells.push(el("td", {}, box))
  }
  cells.push(
    el("td", {}, link(`#/tasks/${enc(q)}/${enc(t.id)}`, t.id, { className: "mono", "data-testid": "task-link" }))
  )
  cells.push(el("td", { text: t.type }))
  cells.push(el("td", {}, el("code", { className: "preview", title: t.payload, text: t.payload || "—" })))
  if (state === "active") cells.push(el("td", { text: t.start_time === "-" ? "—" : fmtTime(t.start_time) }))
  if (state === "scheduled" || state === "retry") cells.push(el("td", { text: fmtTime(t.next_process_at) }))
  if (state === "retry" || state === "archived")
    cells.push(el("td", { className: "num", text: `${t.retried}/${t.max_retry}` }))
  if (state === "retry" || state === "archived") cells.push(el("td", { className: "error", text: t.error_message }))
  if (state === "archived") cells.push(el("td", { text: fmtTime(t.last_failed_at) }))
  if (state === "completed") {
    cells.push(el("td", { text: fmtTime(t.completed_at) }))
    cells.push(el("td", {}, el("code", { className: "preview", text: t.result || "—" })))
  }
  return el("tr", { "data-task-id": t.id }, cells)
}

function stateHeads(state: TaskState): HTMLTableRowElement {
  const heads: Array<string> = []
  if (config.allowActions && state !== "active") heads.push("")
  heads.push("ID", "Type", "Payload")
  if (state === "active") heads.push("Started")
  if (state === "scheduled" || state === "retry") heads.push("Next process at")
  if (state === "retry" || state === "archived") heads.push("Retried", "Last error")
  if (state === "archived") heads.push("Failed at")
  if (state === "completed") heads.push("Completed at", "Result")
  return headRow(heads)
}

/** The actions on every task of a state: [label, API action, method]. */
const bulk: Partial<Record<TaskState, ReadonlyArray<readonly [string, string, Method]>>> = {
  active: [["Cancel all", "cancel_all", "POST"]],
  pending: [
    ["Archive all", "archive_all", "POST"],
    ["Delete all", "delete_all", "DELETE"]
  ],
  scheduled: [
    ["Run all", "run_all", "POST"],
    ["Archive all", "archive_all", "POST"],
    ["Delete all", "delete_all", "DELETE"]
  ],
  retry: [
    ["Run all", "run_all", "POST"],
    ["Archive all", "archive_all", "POST"],
    ["Delete all", "delete_all", "DELETE"]
  ],
  archived: [
    ["Run all", "run_all", "POST"],
    ["Delete all", "delete_all", "DELETE"]
  ],
  completed: [["Delete all", "delete_all", "DELETE"]],
  aggregating: [
    ["Run all", "run_all", "POST"],
    ["Archive all", "archive_all", "POST"],
    ["Delete all", "delete_all", "DELETE"]
  ]
}
/** The actions on the selected tasks of a state: [label, API action]. */
const batch: Partial<Record<TaskState, ReadonlyArray<readonly [string, string]>>> = {
  pending: [
    ["Archive selected", "batch_archive"],
    ["Delete selected", "batch_delete"]
  ],
  scheduled: [
    ["Run selected", "batch_run"],
    ["Archive selected", "batch_archive"],
    ["Delete selected", "batch_delete"]
  ],
  retry: [
    ["Run selected", "batch_run"],
    ["Archive selected", "batch_archive"],
    ["Delete selected", "batch_delete"]
  ],
  archived: [
    ["Run selected", "batch_run"],
    ["Delete selected", "batch_delete"]
  ],
  completed: [["Delete selected", "batch_delete"]],
  aggregating: [
    ["Run selected", "batch_run"],
    ["Archive selected", "batch_archive"],
    ["Delete selected", "batch_delete"]
  ]
}

const pageOf = (params: URLSearchParams): number => Math.max(1, parseInt(params.get("page") || "1", 10) || 1)

function viewQueue(q: string, state: TaskState, params: URLSearchParams): Promise<Node> {
  setNav("queues")
  const page = pageOf(params)
  const size = 20
  const group = params.get("group")
  const listPath =
    state === "aggregating"
      ? group
        ? `/api/queues/${enc(q)}/groups/${enc(group)}/aggregating_tasks?page=${page}&size=${size}`
        : null
      : `/api/queues/${enc(q)}/${state}_tasks?page=${page}&size=${size}`
  return Promise.all([
    api<{ current: QueueRow; history: ReadonlyArray<DayStats> }>("GET", `/api/queues/${enc(q)}?days=14`),
    listPath ? api<{ tasks: ReadonlyArray<TaskRow> }>("GET", listPath) : Promise.resolve(null),
    state === "aggregating"
      ? api<{ groups: ReadonlyArray<GroupRow> }>("GET", `/api/queues/${enc(q)}/groups`)
      : Promise.resolve(null)
  ]).then(([{ current: s, history }, list, groups]) => {
    const frag = el("div", {})
    frag.appendChild(
      el(
        "h1",
        {},
        link("#/", "Queues"),
        " / ",
        el("span", { "data-testid": "queue-name", text: q }),
        " ",
        el("span", { className: `badge ${s.paused ? "paused" : "run"}`, text: s.paused ? "paused" : "run" })
      )
    )
    frag.appendChild(
      el(
        "div",
        { className: "cards" },
        card("Size", String(s.size), "stat-size"),
        card("Latency", s.display_latency, "stat-latency"),
        card("Memory", fmtBytes(s.memory_usage_bytes), "stat-memory"),
        card("Processed today", String(s.processed), "stat-processed"),
        card("Failed today", String(s.failed), "stat-failed"),
        card("Processed total", String(s.processed_total)),
        card("Failed total", String(s.failed_total)),
        card("Limit", limitText(s.limit), "stat-limit"),
        card("Held", s.held_until ? `until ${fmtTime(s.held_until)}` : "no", "stat-held")
      )
    )
    frag.appendChild(
      el(
        "div",
        { className: "toolbar" },
        pauseOrResume(q, s.paused, ["Pause queue", "Resume queue"], ["queue paused", "queue resumed"])
      )
    )
    frag.appendChild(limitForm(q, s.limit))
    frag.appendChild(chart(history))
    frag.appendChild(
      el(
        "div",
        { className: "tabs", role: "tablist" },
        STATES.map((st) =>
          link(`#/queues/${enc(q)}/${st}`, `${st} (${s[st]})`, {
            className: st === state ? "active" : "",
            role: "tab",
            "data-testid": `tab-${st}`
          })
        )
      )
    )
    const groupList = groups?.groups ?? []
    if (state === "aggregating") {
      frag.appendChild(
        el(
          "table",
          { "data-testid": "groups-table" },
          el("thead", {}, el("tr", {}, el("th", { text: "Group" }), el("th", { className: "num", text: "Size" }))),
          el(
            "tbody",
            {},
            groupList.map((g) =>
              el(
                "tr",
                {},
                el("td", {}, link(`#/queues/${enc(q)}/aggregating?group=${enc(g.group)}`, g.group)),
                el("td", { className: "num", text: g.size })
              )
            )
          )
        )
      )
      if (!group) {
        if (groupList.length === 0) frag.appendChild(notice("No aggregation groups in this queue."))
        return frag
      }
      frag.appendChild(el("h2", { text: `Group ${group}` }))
    }
    const selected = new Set<string>()
    const groupPath =
      state === "aggregating"
        ? `/api/queues/${enc(q)}/groups/${enc(group ?? "")}/aggregating_tasks`
        : `/api/queues/${enc(q)}/${state}_tasks`
    const bar = el("div", { className: "toolbar" })
    for (const [label, action] of batch[state] ?? []) {
      bar.appendChild(
        actionButton(
          label,
          () => {
            if (selected.size === 0) throw new Error("select tasks first")
            return api<BatchResult>("POST", `${groupPath}:${action}`, { task_ids: Array.from(selected) }).then(
              (res) => {
                const ok = res.pending_ids || res.archived_ids || res.deleted_ids || []
                const bad = res.error_ids || res.failed_ids || []
                return `${label}: ${ok.length} done${bad.length ? `, ${bad.length} failed` : ""}`
              }
            )
          },
          { name: action }
        )
      )
    }
    bar.appendChild(el("span", { className: "spacer" }))
    for (const [label, action, method] of bulk[state] ?? []) {
      bar.appendChild(
        actionButton(
          label,
          () =>
            api<BulkResult>(method, `${groupPath}:${action}`).then((res) => {
              const n =
                res.deleted !== undefined ? res.deleted : res.archived !== undefined ? res.archived : res.scheduled
              return label + (n !== undefined ? `: ${n} task(s)` : ": done")
            }),
          { name: action, danger: action === "delete_all", confirm: `${label} ${state} tasks of ${q}?` }
        )
      )
    }
    frag.appendChild(bar)
    const tasks = list?.tasks ?? []
    if (tasks.length === 0) frag.appendChild(notice(`No ${state} tasks${page > 1 ? ` on page ${page}` : ""}.`))
    else
      frag.appendChild(
        el(
          "table",
          { "data-testid": "tasks-table" },
          el("thead", {}, stateHeads(state)),
          el(
            "tbody",
            {},
            tasks.map((t) => taskRow(q, state, t, selected))
          )
        )
      )
    const total = state === "aggregating" ? (groupList.find((g) => g.group === group) ?? { size: 0 }).size : s[state]
    const pages = Math.max(1, Math.ceil(total / size))
    const qs = (p: number) => `#/queues/${enc(q)}/${state}?${group ? `group=${enc(group)}&` : ""}page=${p}`
    frag.appendChild(
      el(
        "div",
        { className: "pager" },
        page > 1
          ? link(qs(page - 1), "← Previous", { "data-testid": "prev-page" })
          : el("span", { className: "muted", text: "← Previous" }),
        el("span", { "data-testid": "page-info", text: `page ${page} of ${pages}` }),
        page < pages
          ? link(qs(page + 1), "Next →", { "data-testid": "next-page" })
          : el("span", { className: "muted", text: "Next →" })
      )
    )
    return frag
  })
}

const pretty = (text: string): string => {
  try {
    return JSON.stringify(JSON.parse(text), null, 2)
  } catch {
    return text
  }
}

function viewTask(q: string, id: string): Promise<Node> {
  setNav("queues")
  return api<TaskRow>("GET", `/api/queues/${enc(q)}/tasks/${enc(id)}`).then((t) => {
    const frag = el("div", {})
    frag.appendChild(
      el(
        "h1",
        {},
        link("#/", "Queues"),
        " / ",
        link(`#/queues/${enc(q)}/${t.state}`, q),
        " / ",
        el("span", { className: "mono", "data-testid": "task-id", text: t.id })
      )
    )
    const acts = el("div", { className: "toolbar" })
    const tp =
      t.state === "aggregating"
        ? `/api/queues/${enc(q)}/groups/${enc(t.group)}/aggregating_tasks/${enc(t.id)}`
        : `/api/queues/${enc(q)}/${t.state}_tasks/${enc(t.id)}`
    const among = (states: ReadonlyArray<TaskState>) => states.includes(t.state)
    if (among(["scheduled", "retry", "archived", "aggregating"])) {
      acts.appendChild(
        actionButton("Run now", () => api("POST", `${tp}:run`).then(() => "task moved to pending"), { name: "run" })
      )
    }
    if (among(["pending", "scheduled", "retry", "aggregating"])) {
      acts.appendChild(
        actionButton("Archive", () => api("POST", `${tp}:archive`).then(() => "task archived"), { name: "archive" })
      )
    }
    if (t.state === "active") {
      acts.appendChild(
        actionButton(
          "Cancel",
          () => api("POST", `/api/queues/${enc(q)}/active_tasks/${enc(t.id)}:cancel`).then(() => "cancel signal sent"),
          { name: "cancel" }
        )
      )
    }
    if (t.state !== "active") {
      acts.appendChild(
        actionButton(
          "Delete",
          () =>
            api("DELETE", tp).then(() => {
              location.hash = `#/queues/${enc(q)}/${t.state}`
              return "task deleted"
            }),
          { name: "delete", danger: true, confirm: `Delete task ${t.id}?` }
        )
      )
    }
    frag.appendChild(acts)
    const rows: ReadonlyArray<readonly [string, Child]> = [
      ["State", el("span", { "data-testid": "task-state", text: t.state })],
      ["Type", t.type],
      ["Queue", t.queue],
      ["Retried", `${t.retried} of ${t.max_retry}`],
      ["Last error", el("span", { className: "error", "data-testid": "task-error", text: t.error_message || "—" })],
      ["Last failed at", fmtTime(t.last_failed_at)],
      ["Next process at", fmtTime(t.next_process_at)],
      ["Timeout", t.timeout_seconds ? `${t.timeout_seconds} s` : "—"],
      ["Deadline", fmtTime(t.deadline)],
      ["Group", t.group || "—"],
      ["Completed at", fmtTime(t.completed_at)],
      ["Retention left", t.ttl_seconds ? `${t.ttl_seconds} s` : "—"],
      ["Orphaned", t.is_orphaned ? "yes (its lease ran out)" : "no"],
      ["Started", t.start_time ? fmtTime(t.start_time === "-" ? "" : t.start_time) : "—"],
      ["Trace id", el("span", { className: "mono", "data-testid": "trace-id", text: t.trace_id || "—" })]
    ]
    frag.appendChild(
      el(
        "dl",
        { className: "kv" },
        rows.map(([k, v]) => [el("dt", { text: k }), el("dd", {}, v)])
      )
    )
    frag.appendChild(el("h2", { text: "Payload" }))
    frag.appendChild(el("pre", { "data-testid": "task-payload", text: t.payload ? pretty(t.payload) : "(none)" }))
    if (t.result) {
      frag.appendChild(el("h2", { text: "Result" }))
      frag.appendChild(el("pre", { "data-testid": "task-result", text: pretty(t.result) }))
    }
    const headers = t.headers ?? {}
    const hk = Object.keys(headers)
    frag.appendChild(el("h2", { text: "Headers" }))
    if (hk.length === 0) frag.appendChild(el("p", { className: "muted", text: "No headers." }))
    else frag.appendChild(keyValueTable("task-headers", hk, (k) => headers[k]))
    return frag
  })
}

function viewGroups(): Promise<Node> {
  setNav("groups")
  return api<{ queues: ReadonlyArray<QueueRow> }>("GET", "/api/queues")
    .then((r) =>
      Promise.all(
        r.queues.map((q) =>
          api<{ groups: ReadonlyArray<GroupRow> }>("GET", `/api/queues/${enc(q.queue)}/groups`).then((g) => ({
            queue: q.queue,
            groups: g.groups
          }))
        )
      )
    )
    .then((all) => {
      const rows = all.flatMap((x) =>
        x.groups.map((g) =>
          el(
            "tr",
            {},
            el("td", { text: x.queue }),
            el("td", {}, link(`#/queues/${enc(x.queue)}/aggregating?group=${enc(g.group)}`, g.group)),
            el("td", { className: "num", text: g.size })
          )
        )
      )
      const frag = el("div", {}, el("h1", { text: "Aggregation groups" }))
      if (rows.length === 0) frag.appendChild(notice("No aggregation groups."))
      else
        frag.appendChild(
          el(
            "table",
            { "data-testid": "all-groups" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                el("th", { text: "Queue" }),
                el("th", { text: "Group" }),
                el("th", { className: "num", text: "Size" })
              )
            ),
            el("tbody", {}, rows)
          )
        )
      return frag
    })
}

function viewServers(): Promise<Node> {
  setNav("servers")
  return api<{ servers: ReadonlyArray<ServerRow> }>("GET", "/api/servers").then((r) => {
    const frag = el("div", {}, el("h1", { text: "Servers" }))
    if (r.servers.length === 0) {
      frag.appendChild(notice("No running servers."))
      return frag
    }
    const serverRows = r.servers.map((s) => {
      const queues =
        Object.keys(s.queue_priorities)
          .map((k) => `${k}:${s.queue_priorities[k]}`)
          .join(", ") + (s.strict_priority_enabled ? " (strict)" : "")
      return el(
        "tr",
        {},
        el("td", { text: s.host }),
        el("td", { text: s.pid }),
        el("td", { text: s.status }),
        el("td", { className: "num", text: `${s.active_workers.length}/${s.concurrency}` }),
        el("td", { text: queues }),
        el("td", { text: fmtTime(s.start_time) }),
        el("td", { className: "mono", text: s.id })
      )
    })
    frag.appendChild(
      el(
        "table",
        { "data-testid": "servers-table" },
        el("thead", {}, headRow(["Host", "PID", "Status", "Active", "Queues", "Started", "ID"])),
        el("tbody", {}, serverRows)
      )
    )
    frag.appendChild(el("h2", { text: "Active workers" }))
    const workers = r.servers.flatMap((s) => s.active_workers.map((w) => ({ s, w })))
    if (workers.length === 0)
      frag.appendChild(el("p", { className: "muted", text: "No task is being processed right now." }))
    else
      frag.appendChild(
        el(
          "table",
          { "data-testid": "workers-table" },
          el("thead", {}, headRow(["Task", "Type", "Queue", "Payload", "Started", "Deadline", "Server"])),
          el(
            "tbody",
            {},
            workers.map(({ s, w }) =>
              el(
                "tr",
                {},
                el("td", {}, link(`#/tasks/${enc(w.queue)}/${enc(w.task_id)}`, w.task_id, { className: "mono" })),
                el("td", { text: w.task_type }),
                el("td", { text: w.queue }),
                el("td", {}, el("code", { className: "preview", text: w.task_payload })),
                el("td", { text: fmtTime(w.start_time) }),
                el("td", { text: fmtTime(w.deadline) }),
                el("td", { className: "mono", text: `${s.host}:${s.pid}` })
              )
            )
          )
        )
      )
    return frag
  })
}

function viewScheduler(entryId: string | undefined, params: URLSearchParams): Promise<Node> {
  setNav("scheduler")
  return api<{ entries: ReadonlyArray<EntryRow> }>("GET", "/api/scheduler_entries").then((r) => {
    const frag = el("div", {}, el("h1", { text: "Scheduler entries" }))
    if (r.entries.length === 0) frag.appendChild(notice("No periodic tasks: no scheduler is running."))
    else
      frag.appendChild(
        el(
          "table",
          { "data-testid": "scheduler-table" },
          el("thead", {}, headRow(["Entry", "Spec", "Type", "Payload", "Options", "Next", "Previous"])),
          el(
            "tbody",
            {},
            r.entries.map((e) =>
              el(
                "tr",
                {},
                el(
                  "td",
                  {},
                  link(`#/scheduler/${enc(e.id)}`, e.id, { className: "mono", "data-testid": "entry-link" })
                ),
                el("td", { className: "mono", text: e.spec }),
                el("td", { text: e.task_type }),
                el("td", {}, el("code", { className: "preview", text: e.task_payload })),
                el("td", { text: e.options.join(", ") }),
                el("td", { text: fmtTime(e.next_enqueue_at) }),
                el("td", { text: fmtTime(e.prev_enqueue_at) })
              )
            )
          )
        )
      )
    if (!entryId) return frag
    const page = pageOf(params)
    return api<{ events: ReadonlyArray<{ task_id: string; enqueued_at: string }> }>(
      "GET",
      `/api/scheduler_entries/${enc(entryId)}/enqueue_events?page=${page}&size=20`
    ).then((ev) => {
      frag.appendChild(el("h2", {}, "Enqueue history of ", el("span", { className: "mono", text: entryId })))
      if (ev.events.length === 0) frag.appendChild(notice(`Nothing enqueued${page > 1 ? ` on page ${page}` : " yet"}.`))
      else
        frag.appendChild(
          el(
            "table",
            { "data-testid": "events-table" },
            el("thead", {}, el("tr", {}, el("th", { text: "Task" }), el("th", { text: "Enqueued at" }))),
            el(
              "tbody",
              {},
              ev.events.map((e) =>
                el(
                  "tr",
                  {},
                  el("td", { className: "mono", text: e.task_id }),
                  el("td", { text: fmtTime(e.enqueued_at) })
                )
              )
            )
          )
        )
      frag.appendChild(
        el(
          "div",
          { className: "pager" },
          page > 1
            ? link(`#/scheduler/${enc(entryId)}?page=${page - 1}`, "← Newer")
            : el("span", { className: "muted", text: "← Newer" }),
          el("span", { text: `page ${page}` }),
          ev.events.length === 20
            ? link(`#/scheduler/${enc(entryId)}?page=${page + 1}`, "Older →")
            : el("span", { className: "muted", text: "Older →" })
        )
      )
      return frag
    })
  })
}

function viewRedis(): Promise<Node> {
  setNav("redis")
  return api<{ info: Readonly<Record<string, string>>; cluster?: boolean }>("GET", "/api/redis_info").then((r) => {
    const i = r.info
    const frag = el("div", {}, el("h1", { text: `Redis${r.cluster ? " Cluster" : ""}` }))
    frag.appendChild(
      el(
        "div",
        { className: "cards" },
        card("Version", i.redis_version || "?", "redis-version"),
        card("Uptime", i.uptime_in_days !== undefined ? `${i.uptime_in_days} days` : "?"),
        card("Clients", i.connected_clients || "?"),
        card("Memory used", i.used_memory_human || "?"),
        card("Peak memory", i.used_memory_peak_human || "?")
      )
    )
    const keys = Object.keys(i).sort()
    frag.appendChild(keyValueTable("redis-info", keys, (k) => i[k]))
    return frag
  })
}

// ---- workflows (effect-asynq/workflow executions, read through the inspector) ----

type ExecutionState = "pending" | "running" | "suspended" | "complete"
interface ExecutionRow {
  readonly executionId: string
  readonly queue: string
  readonly state: ExecutionState
  readonly failed: boolean
  readonly runs: number
  readonly outcome?: "success" | "failure" | "suspended"
  readonly error?: string
}
interface ActivityRow {
  readonly name: string
  readonly attempt: number
  readonly status: "done" | "failed"
  readonly result?: unknown
  readonly error?: string
}
interface DeferredRow {
  readonly name: string
  readonly status: "done" | "failed" | "waiting"
  readonly value?: unknown
  readonly error?: string
}
interface ClockRow {
  readonly name: string
  readonly status: "scheduled" | "fired"
  readonly dueAtMs?: number
}
interface ExecutionDetail extends ExecutionRow {
  readonly workflow: string
  readonly payload?: unknown
  readonly result?: unknown
  readonly parent?: { readonly workflow: string; readonly executionId: string }
  readonly interrupt?: "interrupt" | "interruptUnsafe"
  readonly runTaskId?: string
  readonly activities: ReadonlyArray<ActivityRow>
  readonly deferreds: ReadonlyArray<DeferredRow>
  readonly clocks: ReadonlyArray<ClockRow>
}
interface WorkflowActionJson {
  readonly outcome: "run-enqueued" | "recorded" | string
}

const EXECUTION_FILTERS = ["pending", "running", "suspended", "failed", "complete"] as const

/** An execution's state as the CLI shows it: "failed" for one suspended by SuspendOnFailure. */
const executionStateText = (e: ExecutionRow): string => (e.state === "suspended" && e.failed ? "failed" : e.state)
const stateBadge = (text: string, testId?: string): HTMLSpanElement =>
  el("span", {
    className: `badge wf-${text}`,
    text,
    "data-testid": testId
  })
/** A stored JSON value in one line (or "—"). */
const jsonText = (v: unknown): string => (v === undefined ? "—" : (JSON.stringify(v) ?? String(v)))

/** The `prefix` (and `shards`) query of the workflow views, carried from link to link: "" for the defaults. */
function workflowQuery(params: URLSearchParams): string {
  const q = new URLSearchParams()
  const prefix = params.get("prefix")
  const shards = params.get("shards")
  if (prefix) q.set("prefix", prefix)
  if (shards) q.set("shards", shards)
  return q.toString()
}
const withQuery = (path: string, query: string, more?: string): string => {
  const parts = [query, more ?? ""].filter((p) => p !== "")
  return parts.length === 0 ? path : `${path}?${parts.join("&")}`
}

function viewWorkflows(params: URLSearchParams): Promise<Node> {
  setNav("workflows")
  const query = workflowQuery(params)
  return api<{ prefix: string; workflows: ReadonlyArray<{ workflow: string; queues: ReadonlyArray<string> }> }>(
    "GET",
    withQuery("/api/workflows", query)
  ).then((r) => {
    const frag = el("div", {}, el("h1", { text: "Workflows" }))
    frag.appendChild(
      el("p", {
        className: "muted",
        text: `Durable workflows (effect-asynq/workflow) whose control queues "${r.prefix}:<workflow>" are registered on this Redis.`
      })
    )
    if (r.workflows.length === 0) {
      frag.appendChild(
        notice(`No workflows: no control queue "${r.prefix}:…" is registered (no execution started yet).`)
      )
      return frag
    }
    frag.appendChild(
      dataTable(
        "workflows-table",
        ["Workflow", "Control queues"],
        r.workflows.map((w) =>
          el(
            "tr",
            { "data-workflow": w.workflow },
            el(
              "td",
              {},
              link(withQuery(`#/workflows/${enc(w.workflow)}`, query), w.workflow, { "data-testid": "workflow-link" })
            ),
            el("td", { className: "mono", text: w.queues.join(", ") })
          )
        )
      )
    )
    return frag
  })
}

function viewExecutions(workflow: string, params: URLSearchParams): Promise<Node> {
  setNav("workflows")
  const query = workflowQuery(params)
  const page = pageOf(params)
  const state = params.get("state") ?? ""
  const size = 20
  const listQuery = `page=${page}&size=${size}${state ? `&state=${enc(state)}` : ""}`
  return api<{ page: number; more: boolean; executions: ReadonlyArray<ExecutionRow> }>(
    "GET",
    withQuery(`/api/workflows/${enc(workflow)}/executions`, query, listQuery)
  ).then((r) => {
    const frag = el("div", {})
    frag.appendChild(
      el(
        "h1",
        {},
        link(withQuery("#/workflows", query), "Workflows"),
        " / ",
        el("span", { "data-testid": "workflow-name", text: workflow })
      )
    )
    const tab = (value: string, label: string) =>
      link(withQuery(`#/workflows/${enc(workflow)}`, query, value ? `state=${value}` : ""), label, {
        className: value === state ? "active" : "",
        role: "tab",
        "data-testid": `filter-${value || "all"}`
      })
    frag.appendChild(
      el(
        "div",
        { className: "tabs", role: "tablist" },
        tab("", "all"),
        EXECUTION_FILTERS.map((f) => tab(f, f))
      )
    )
    if (r.executions.length === 0)
      frag.appendChild(notice(`No ${state ? `${state} ` : ""}executions${page > 1 ? ` on page ${page}` : ""}.`))
    else
      frag.appendChild(
        dataTable(
          "executions-table",
          ["Execution", "State", "Runs", "Outcome", "Error"],
          r.executions.map((e) =>
            el(
              "tr",
              { "data-execution-id": e.executionId },
              el(
                "td",
                {},
                link(withQuery(`#/workflows/${enc(workflow)}/${enc(e.executionId)}`, query), e.executionId, {
                  className: "mono",
                  "data-testid": "execution-link"
                })
              ),
              el("td", {}, stateBadge(executionStateText(e), "execution-state")),
              el("td", { className: "num", text: e.runs }),
              el("td", { text: e.outcome ?? "—" }),
              el("td", { className: "error", text: e.error ?? "" })
            )
          )
        )
      )
    const pageLink = (p: number) =>
      withQuery(`#/workflows/${enc(workflow)}`, query, `${state ? `state=${enc(state)}&` : ""}page=${p}`)
    frag.appendChild(
      el(
        "div",
        { className: "pager" },
        page > 1
          ? link(pageLink(page - 1), "← Previous", { "data-testid": "prev-page" })
          : el("span", { className: "muted", text: "← Previous" }),
        el("span", { "data-testid": "page-info", text: `page ${page}` }),
        r.more
          ? link(pageLink(page + 1), "Next →", { "data-testid": "next-page" })
          : el("span", { className: "muted", text: "Next →" })
      )
    )
    return frag
  })
}

function viewExecution(workflow: string, id: string, params: URLSearchParams): Promise<Node> {
  setNav("workflows")
  const query = workflowQuery(params)
  const path = `/api/workflows/${enc(workflow)}/executions/${enc(id)}`
  return api<ExecutionDetail>("GET", withQuery(path, query)).then((x) => {
    const frag = el("div", {})
    frag.appendChild(
      el(
        "h1",
        {},
        link(withQuery("#/workflows", query), "Workflows"),
        " / ",
        link(withQuery(`#/workflows/${enc(workflow)}`, query), workflow),
        " / ",
        el("span", { className: "mono", "data-testid": "execution-id", text: x.executionId })
      )
    )
    const stateText = executionStateText(x)
    // Actions only where they can be taken: on a read-only dashboard there are none (the API refuses them too).
    if (x.state !== "complete") {
      if (config.allowActions) {
        frag.appendChild(
          el(
            "div",
            { className: "toolbar", "data-testid": "execution-actions" },
            actionButton(
              x.failed ? "Retry (resume)" : "Resume",
              () =>
                api<WorkflowActionJson>("POST", withQuery(`${path}:resume`, query)).then(
                  (r) => `resumed: ${r.outcome === "run-enqueued" ? "a run is enqueued" : "its next run will see it"}`
                ),
              { name: "resume", title: "Resume the execution as Workflow.resume does (retries a failed one)" }
            ),
            actionButton(
              "Cancel",
              () =>
                api<WorkflowActionJson>("POST", withQuery(`${path}:cancel`, query)).then(
                  () => "cancel requested: its next run ends interrupted (finalizers and compensations run)"
                ),
              {
                name: "cancel",
                danger: true,
                confirm: `Cancel execution ${x.executionId} of ${workflow}?`,
                title: "Cancel the execution as Workflow.interrupt does"
              }
            )
          )
        )
      } else frag.appendChild(el("p", { className: "muted", "data-testid": "read-only-note", text: READ_ONLY_TITLE }))
    }
    const rows: ReadonlyArray<readonly [string, Child]> = [
      [
        "State",
        [
          stateBadge(stateText, "exec-state"),
          x.interrupt ? ` (${x.interrupt === "interrupt" ? "cancel" : "unsafe cancel"} requested)` : ""
        ]
      ],
      ["Runs", el("span", { "data-testid": "exec-runs", text: x.runs })],
      ["Outcome", el("span", { "data-testid": "exec-outcome", text: x.outcome ?? "—" })],
      ["Error", el("span", { className: "error", "data-testid": "exec-error", text: x.error ?? "—" })],
      ["Control queue", el("span", { className: "mono", text: x.queue })],
      [
        "Run task",
        x.runTaskId
          ? link(`#/tasks/${enc(x.queue)}/${enc(x.runTaskId)}`, x.runTaskId, { className: "mono" })
          : "— (none pending or running)"
      ],
      [
        "Parent",
        x.parent
          ? link(
              withQuery(`#/workflows/${enc(x.parent.workflow)}/${enc(x.parent.executionId)}`, query),
              `${x.parent.workflow} ${x.parent.executionId}`,
              { "data-testid": "exec-parent" }
            )
          : "—"
      ]
    ]
    frag.appendChild(
      el(
        "dl",
        { className: "kv" },
        rows.map(([k, v]) => [el("dt", { text: k }), el("dd", {}, v)])
      )
    )

    const running =
      x.state === "running"
        ? el("tr", { "data-step": "(running)" }, [
            el("td", { className: "muted", text: "(the active run)" }),
            el("td", { text: "—" }),
            el("td", {}, stateBadge("running", "activity-status")),
            el("td", { className: "muted", text: "activities not recorded yet are running in it" })
          ])
        : null
    titledTable(
      frag,
      "Activities",
      "No activity recorded.",
      "activities-table",
      ["Activity", "Attempt", "Status", "Result / error"],
      [
        ...x.activities.map((a) =>
          el(
            "tr",
            { "data-step": a.name },
            el("td", { text: a.name }),
            el("td", { className: "num", text: a.attempt }),
            el("td", {}, stateBadge(a.status, "activity-status")),
            a.status === "done"
              ? el("td", {}, el("code", { className: "preview", text: jsonText(a.result) }))
              : el("td", { className: "error", "data-testid": "activity-error", text: a.error ?? "" })
          )
        ),
        running
      ]
    )
    titledTable(
      frag,
      "Deferreds",
      "No deferred completed or waited on.",
      "deferreds-table",
      ["Deferred", "Status", "Value / error"],
      x.deferreds.map((d) =>
        el(
          "tr",
          { "data-deferred": d.name },
          el("td", { text: d.name }),
          el("td", {}, stateBadge(d.status, "deferred-status")),
          d.status === "done"
            ? el("td", {}, el("code", { className: "preview", text: jsonText(d.value) }))
            : d.status === "failed"
              ? el("td", { className: "error", text: d.error ?? "" })
              : el("td", { className: "muted", text: "awaited by the execution" })
        )
      )
    )
    titledTable(
      frag,
      "Clocks",
      "No durable clock.",
      "clocks-table",
      ["Clock", "Status", "Due at"],
      x.clocks.map((c) =>
        el(
          "tr",
          { "data-clock": c.name },
          el("td", { text: c.name }),
          el("td", {}, stateBadge(c.status, "clock-status")),
          el("td", { text: c.dueAtMs === undefined ? "—" : fmtTime(new Date(c.dueAtMs).toISOString()) })
        )
      )
    )

    frag.appendChild(el("h2", { text: "Payload" }))
    frag.appendChild(el("pre", { "data-testid": "exec-payload", text: JSON.stringify(x.payload, null, 2) ?? "(none)" }))
    frag.appendChild(el("h2", { text: "Result" }))
    frag.appendChild(
      el("pre", {
        "data-testid": "exec-result",
        text: x.result === undefined ? "(no run has ended yet)" : (JSON.stringify(x.result, null, 2) ?? "")
      })
    )
    return frag
  })
}

function route(): Promise<Node> {
  const hash = location.hash.replace(/^#/, "") || "/"
  const qi = hash.indexOf("?")
  const path = qi >= 0 ? hash.slice(0, qi) : hash
  const params = new URLSearchParams(qi >= 0 ? hash.slice(qi + 1) : "")
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent)
  const [first, second, third] = parts
  if (first === undefined) return viewQueues()
  if (first === "queues" && second !== undefined) return viewQueue(second, isState(third) ? third : "pending", params)
  if (first === "tasks" && parts.length === 3 && second !== undefined && third !== undefined)
    return viewTask(second, third)
  if (first === "groups") return viewGroups()
  if (first === "servers") return viewServers()
  if (first === "scheduler") return viewScheduler(second, params)
  if (first === "redis") return viewRedis()
  if (first === "workflows" && second === undefined) return viewWorkflows(params)
  if (first === "workflows" && second !== undefined && third === undefined) return viewExecutions(second, params)
  if (first === "workflows" && parts.length === 3 && second !== undefined && third !== undefined)
    return viewExecution(second, third, params)
  return Promise.resolve(notice(`Nothing here: ${path}`, true))
}

let renderCount = 0
function render(): Promise<void> {
  const mine = ++renderCount
  return route().then(
    (node) => {
      if (mine !== renderCount) return
      main.textContent = ""
      if (pendingFlash) {
        main.appendChild(notice(pendingFlash.text, pendingFlash.isError))
        pendingFlash = null
      }
      main.appendChild(node)
      main.setAttribute("data-ready", String(mine))
    },
    (e: ApiError) => {
      if (mine !== renderCount) return
      main.textContent = ""
      main.appendChild(notice((e.status === 404 ? "Not found: " : "Error: ") + e.message, true))
      main.setAttribute("data-ready", String(mine))
    }
  )
}
window.addEventListener("hashchange", () => void render())
void render()
