/**
 * The dashboard in a real headless browser (Debian's chromium driven by playwright-core) on real
 * queue data: every page loads and shows the data, a click goes from the queue to a task's detail,
 * an action works with actions allowed and is refused (button disabled, API 403) without; a queue's
 * limit is shown and, with actions allowed, set through its form and cleared; the token
 * login (styled, a wrong token said, the token never in a URL); a page on a name rebound to
 * 127.0.0.1 (DNS rebinding, via Chromium's host resolver rules) reads and changes nothing.
 * Skipped, saying so, only where /usr/bin/chromium is missing (`.ci/run` installs it).
 * With SCREENSHOTS_DIR set, it also saves the screenshots the README shows.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Effect, ManagedRuntime } from "effect"
import { chromium, type BrowserContext, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/index.js"
import type { Broker } from "../../src/broker/Broker.js"
import { clearQueueLimit, getQueueLimit, setQueueLimit } from "../../src/inspector/control.js"
import { getTaskInfo } from "../../src/inspector/getTaskInfo.js"
import { getQueueInfo } from "../../src/inspector/queueInfo.js"
import { brokerLayer } from "../../src/runtime/promiseRuntime.js"
import { holdQueueScript } from "../../src/broker/holdQueue.js"
import { runScript } from "../../src/broker/script.js"
import { startRedisServer } from "../support/redis-server.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { arrangeDashboardData, type DashboardData, traceId } from "./fixture.js"

/** The page's document, inside functions run in the browser (tests compile without the DOM lib). */
declare const document: { querySelector(selector: string): { readonly textContent: string | null } | null }
declare const getComputedStyle: (element: unknown) => { readonly maxWidth: string; readonly backgroundColor: string }

/** The name a rebinding attacker's page is served from; Chromium resolves it to 127.0.0.1. */
const attackerHost = "attacker.example"

const chromiumPath = "/usr/bin/chromium"
const hasChromium = existsSync(chromiumPath)
if (!hasChromium)
  console.warn(
    `dashboard browser tests skipped: ${chromiumPath} is missing (apt-get install -y chromium; .ci/run installs it)`
  )
const screenshots = process.env.SCREENSHOTS_DIR

describe.skipIf(!hasChromium)("dashboard in headless Chromium", { timeout: 60_000 }, () => {
  let data: DashboardData
  let readOnly: DashboardServer
  let withActions: DashboardServer
  let context: BrowserContext
  let profile: string
  let rt: ManagedRuntime.ManagedRuntime<Broker, unknown>
  const inspect = <A, E>(eff: Effect.Effect<A, E, Broker>) => rt.runPromise(eff)

  beforeAll(async () => {
    await flushTestDb()
    data = await arrangeDashboardData(testRedisUrl())
    rt = ManagedRuntime.make(brokerLayer(testRedisUrl()))
    readOnly = await serveDashboard({ redis: testRedisUrl(), port: 0 })
    withActions = await serveDashboard({ redis: testRedisUrl(), port: 0, allowActions: true })
    profile = mkdtempSync(join(tmpdir(), "effect-asynq-chromium-"))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        `--host-resolver-rules=MAP ${attackerHost} 127.0.0.1`,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ],
      viewport: { width: 1360, height: 900 }
    })
  }, 120_000)

  afterAll(async () => {
    await context?.close()
    await readOnly?.close()
    await withActions?.close()
    await data?.close()
    await rt?.dispose()
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  /** Opens a view and waits until the script has rendered it. */
  const open = async (server: DashboardServer, hash: string): Promise<Page> => {
    const page = await context.newPage()
    const failures: Array<string> = []
    page.on("pageerror", (e) => failures.push(e.message))
    page.on("console", (m) => {
      if (m.type() === "error") failures.push(m.text())
    })
    await page.goto(`${server.url}${hash}`)
    await page.waitForSelector("main[data-ready]")
    ;(page as Page & { failures: Array<string> }).failures = failures
    return page
  }
  const noErrors = (page: Page) => expect((page as Page & { failures: Array<string> }).failures).toEqual([])
  const shot = async (page: Page, name: string) => {
    if (screenshots === undefined) return
    mkdirSync(screenshots, { recursive: true })
    await page.screenshot({ path: join(screenshots, name), fullPage: true })
  }

  it("queues page: every queue with its sizes, pause state, latency, memory and the history chart", async () => {
    const page = await open(readOnly, "#/")
    const rows = page.locator("[data-testid=queues-table] tbody tr")
    expect(await rows.count()).toBe(4)
    const def = page.locator('tr[data-queue="default"] td')
    const cells = await def.allInnerTexts()
    expect(cells.slice(0, 10)).toEqual(["default", "run", "32", "1", "25", "2", "1", "1", "1", "1"])
    expect(await page.locator('tr[data-queue="low"] [data-testid=queue-state]').innerText()).toBe("paused")
    expect(await page.locator("[data-testid=history-chart] polyline").count()).toBe(2)
    expect(await page.innerText("[data-testid=mode]")).toBe("read-only")
    // read-only: the pause buttons are there but disabled, saying why
    const pause = page.locator('tr[data-queue="default"] button[data-action=pause]')
    expect(await pause.isDisabled()).toBe(true)
    expect(await pause.getAttribute("title")).toContain("--allow-actions")
    await shot(page, "queues.png")
    noErrors(page)
    await page.close()
  })

  it("from a queue's pending tasks, pages through them and clicks through to one task's detail (headers, trace id)", async () => {
    const page = await open(readOnly, "#/")
    await page.click('tr[data-queue="default"] [data-testid=queue-link]')
    await page.waitForSelector("[data-testid=tasks-table]")
    expect(await page.innerText("[data-testid=queue-name]")).toBe("default")
    expect(await page.innerText("[data-testid=stat-size]")).toBe("32")
    expect(await page.locator("[data-testid=tasks-table] tbody tr").count()).toBe(20)
    expect(await page.innerText("[data-testid=page-info]")).toBe("page 1 of 2")
    await page.click("[data-testid=next-page]")
    await page.waitForFunction(() => document.querySelector("[data-testid=page-info]")?.textContent === "page 2 of 2")
    expect(await page.locator("[data-testid=tasks-table] tbody tr").count()).toBe(5)
    await page.click("[data-testid=prev-page]")
    await page.waitForFunction(() => document.querySelector("[data-testid=page-info]")?.textContent === "page 1 of 2")
    await shot(page, "queue.png")
    await page.click(`tr[data-task-id="${data.ids.traced}"] [data-testid=task-link]`)
    await page.waitForSelector("[data-testid=task-id]")
    expect(await page.innerText("[data-testid=task-id]")).toBe(data.ids.traced)
    expect(await page.innerText("[data-testid=task-state]")).toBe("pending")
    expect(await page.innerText("[data-testid=trace-id]")).toBe(traceId)
    expect(JSON.parse(await page.innerText("[data-testid=task-payload]"))).toEqual({ to: "ada@example.com" })
    expect(await page.locator("[data-testid=task-headers]").textContent()).toContain("x-tenantacme")
    await shot(page, "task.png")
    noErrors(page)
    await page.close()
  })

  it("a failed task's detail shows its error and retries; the retry tab lists it", async () => {
    const page = await open(readOnly, "#/queues/default/retry")
    expect(await page.locator("[data-testid=tasks-table] tbody tr").allInnerTexts()).toEqual([
      expect.stringContaining("card declined")
    ])
    await page.click("[data-testid=task-link]")
    await page.waitForSelector("[data-testid=task-error]")
    expect(await page.innerText("[data-testid=task-error]")).toBe("card declined")
    expect(await page.innerText("main")).toContain("1 of 3")
    await shot(page, "task-failed.png")
    noErrors(page)
    await page.close()
  })

  it("completed tasks show their result; a group's aggregating tasks are listed", async () => {
    const page = await open(readOnly, "#/queues/default/completed")
    expect(await page.innerText("[data-testid=tasks-table]")).toContain('{"rows":42}')
    await page.click("[data-testid=tab-aggregating]")
    await page.waitForSelector("[data-testid=groups-table]")
    await page.click("text=digest-42")
    await page.waitForSelector("[data-testid=tasks-table]")
    expect(await page.locator("[data-testid=tasks-table] tbody tr").count()).toBe(2)
    noErrors(page)
    await page.close()
  })

  it("groups, servers (with the active worker), scheduler entries (with their enqueue history) and Redis pages", async () => {
    const page = await open(readOnly, "#/groups")
    expect(await page.innerText("[data-testid=all-groups]")).toContain("digest-42")
    await page.click("[data-testid=nav-servers]")
    await page.waitForSelector("[data-testid=workers-table]")
    expect(await page.innerText("[data-testid=servers-table]")).toContain("slow:1")
    expect(await page.innerText("[data-testid=workers-table]")).toContain(data.ids.slow)
    await shot(page, "servers.png")
    await page.click("[data-testid=nav-scheduler]")
    await page.waitForSelector("[data-testid=scheduler-table]")
    expect(await page.innerText("[data-testid=scheduler-table]")).toContain("@every 1s")
    await page.click("[data-testid=entry-link]")
    await page.waitForSelector("[data-testid=events-table]")
    expect(await page.locator("[data-testid=events-table] tbody tr").count()).toBeGreaterThan(0)
    await page.click("[data-testid=nav-redis]")
    await page.waitForSelector("[data-testid=redis-version]")
    expect(await page.innerText("[data-testid=redis-version]")).toMatch(/^\d+\.\d+/)
    noErrors(page)
    await page.close()
  })

  it("read-only: the task's action buttons are disabled and the API refuses the action (403), changing nothing", async () => {
    const page = await open(readOnly, `#/tasks/default/${data.ids.retry}`)
    const run = page.locator("button[data-action=run]")
    expect(await run.isDisabled()).toBe(true)
    const answer = await page.evaluate(async (id) => {
      const res = await fetch(`/api/queues/default/retry_tasks/${id}:run`, { method: "POST" })
      return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } }
    }, data.ids.retry)
    expect(answer.status).toBe(403)
    expect(answer.body.error.code).toBe("ActionsDisabled")
    expect((await inspect(getTaskInfo("default", data.ids.retry))).state).toBe("retry")
    // the browser logs the refused request, and nothing else went wrong
    expect((page as Page & { failures: Array<string> }).failures).toEqual([
      "Failed to load resource: the server responded with a status of 403 (Forbidden)"
    ])
    await page.close()
  })

  it("with --allow-actions: Run now on the retry task moves it to pending, and the page says so", async () => {
    const page = await open(withActions, `#/tasks/default/${data.ids.retry}`)
    expect(await page.innerText("[data-testid=mode]")).toBe("actions allowed")
    const run = page.locator("button[data-action=run]")
    expect(await run.isDisabled()).toBe(false)
    await run.click()
    await page.waitForFunction(() => document.querySelector("[data-testid=task-state]")?.textContent === "pending")
    expect(await page.innerText("main [role=status]")).toBe("task moved to pending")
    expect((await inspect(getTaskInfo("default", data.ids.retry))).state).toBe("pending")
    noErrors(page)
    await page.close()
  })

  it("with --allow-actions: pausing a queue from the queues page pauses it in Redis", async () => {
    const page = await open(withActions, "#/")
    await page.click('tr[data-queue="default"] button[data-action=pause]')
    await page.waitForFunction(
      () => document.querySelector('tr[data-queue="default"] [data-testid=queue-state]')?.textContent === "paused"
    )
    await page.click('tr[data-queue="default"] button[data-action=resume]')
    await page.waitForFunction(
      () => document.querySelector('tr[data-queue="default"] [data-testid=queue-state]')?.textContent === "run"
    )
    noErrors(page)
    await page.close()
  })

  it("with --allow-actions: the limit form on a queue sets its limit (shown on the queue and in the list, stored in Redis), says what is wrong with bad input, and clears it", async () => {
    const page = await open(withActions, "#/queues/low/pending")
    expect(await page.innerText("[data-testid=stat-limit]")).toBe("none")
    expect(await page.locator("[data-testid=limit-rate]").isDisabled()).toBe(false)
    await page.fill("[data-testid=limit-rate]", "50")
    await page.fill("[data-testid=limit-per]", "1s")
    await page.fill("[data-testid=limit-concurrency]", "3")
    await page.click("button[data-action=set-limit]")
    await page.waitForFunction(() => document.querySelector("[data-testid=stat-limit]")?.textContent !== "none")
    // 50/s without a burst: the default, the tasks of 50 ms at the rate (3)
    expect(await page.innerText("[data-testid=stat-limit]")).toBe("50/s (burst 3), concurrency 3")
    expect(await page.innerText("main [role=status]")).toBe("limit of low set: 50/s (burst 3), concurrency 3")
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 50, perMs: 1000, intervalMs: 20, burst: 3 },
      concurrency: 3
    })
    // the form shows the stored limit; a bad value is refused with the server's words and changes nothing
    expect(await page.inputValue("[data-testid=limit-burst]")).toBe("3")
    await page.fill("[data-testid=limit-concurrency]", "0")
    await page.click("button[data-action=set-limit]")
    await page.waitForSelector("main [role=alert]")
    expect(await page.innerText("main [role=alert]")).toBe(
      "Set limit failed: concurrency must be a whole number >= 1, got 0"
    )
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 50, perMs: 1000, intervalMs: 20, burst: 3 },
      concurrency: 3
    })
    // The per-key parts: set with the queue's, checked by the server as the CLI's flags are.
    await page.fill("[data-testid=limit-concurrency]", "3")
    await page.fill("[data-testid=limit-key-rate]", "10")
    await page.fill("[data-testid=limit-key-per]", "1s")
    await page.fill("[data-testid=limit-key-concurrency]", "2")
    await page.click("button[data-action=set-limit]")
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=stat-limit]")?.textContent?.includes("per key")
    )
    expect(await page.innerText("[data-testid=stat-limit]")).toBe(
      "50/s (burst 3), concurrency 3, per key: 10/s (burst 1), concurrency 2"
    )
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 50, perMs: 1000, intervalMs: 20, burst: 3 },
      concurrency: 3,
      perKey: { rate: { limit: 10, perMs: 1000, intervalMs: 100, burst: 1 }, concurrency: 2 }
    })
    expect(await page.inputValue("[data-testid=limit-key-burst]")).toBe("1")
    const refused = async (fill: Record<string, string>, message: string) => {
      for (const [name, value] of Object.entries(fill)) await page.fill(`[data-testid=limit-${name}]`, value)
      await page.click("button[data-action=set-limit]")
      await page.waitForFunction(
        (m) => document.querySelector("main [role=alert]")?.textContent === m,
        `Set limit failed: ${message}`
      )
    }
    await refused({ "key-concurrency": "0" }, "perKey.concurrency must be a whole number >= 1, got 0")
    await refused(
      { "key-concurrency": "2", "key-rate": "", "key-burst": "4" },
      "perKey.burst applies to a per-key rate: give perKey.rate with it"
    )
    await refused(
      { "key-rate": "10", "key-per": "often" },
      'perKey.rate.per must be a period such as "1s", "500ms", "1m" or a number of milliseconds > 0, got "often"'
    )
    expect((await inspect(getQueueLimit("low")))?.perKey).toEqual({
      rate: { limit: 10, perMs: 1000, intervalMs: 100, burst: 1 },
      concurrency: 2
    })
    // Emptied, the per-key parts are removed (the queue's stay).
    for (const name of ["key-rate", "key-burst", "key-concurrency"]) await page.fill(`[data-testid=limit-${name}]`, "")
    await page.fill("[data-testid=limit-key-per]", "1s")
    await page.click("button[data-action=set-limit]")
    await page.waitForFunction(
      () => document.querySelector("[data-testid=stat-limit]")?.textContent === "50/s (burst 3), concurrency 3"
    )
    expect(await inspect(getQueueLimit("low"))).toEqual({
      rate: { limit: 50, perMs: 1000, intervalMs: 20, burst: 3 },
      concurrency: 3
    })
    await page.click("[data-testid=nav-queues]")
    await page.waitForSelector('tr[data-queue="low"] [data-testid=queue-limit]')
    expect(await page.innerText('tr[data-queue="low"] [data-testid=queue-limit]')).toBe("50/s (burst 3), concurrency 3")
    expect(await page.innerText('tr[data-queue="default"] [data-testid=queue-limit]')).toBe("none")
    await page.click('tr[data-queue="low"] [data-testid=queue-link]')
    await page.waitForSelector("button[data-action=clear-limit]")
    await page.click("button[data-action=clear-limit]")
    await page.waitForFunction(() => document.querySelector("[data-testid=stat-limit]")?.textContent === "none")
    expect(await inspect(getQueueLimit("low"))).toBeUndefined()
    expect((page as Page & { failures: Array<string> }).failures).toEqual(
      Array.from(
        { length: 4 },
        () => "Failed to load resource: the server responded with a status of 400 (Bad Request)"
      )
    )
    await page.close()
  })

  it("read-only: a queue's limit and hold are shown (queue and list) and its form is disabled, saying why", async () => {
    await inspect(setQueueLimit("low", { rate: { limit: 6000, per: "1m" }, burst: 4, perKey: { concurrency: 2 } }))
    try {
      const notHeld = await open(readOnly, "#/queues/low/pending")
      expect(await notHeld.innerText("[data-testid=stat-held]")).toBe("no")
      await notHeld.close()
      // A hold (a handler's RateLimited with holdQueue) is shown beside the limit.
      await inspect(runScript(holdQueueScript, { queue: "low", untilMs: Date.UTC(2099, 0, 1) }))
      const page = await open(readOnly, "#/queues/low/pending")
      expect(await page.innerText("[data-testid=stat-limit]")).toBe("6000/m (burst 4), per key: concurrency 2")
      expect(await page.innerText("[data-testid=stat-held]")).toBe("until 2099-01-01 00:00:00.000 UTC")
      // the inputs are in a disabled fieldset
      for (const input of [
        "rate",
        "per",
        "burst",
        "concurrency",
        "key-rate",
        "key-per",
        "key-burst",
        "key-concurrency"
      ])
        expect(await page.locator(`[data-testid=limit-${input}]`).isDisabled()).toBe(true)
      expect(await page.inputValue("[data-testid=limit-per]")).toBe("1m")
      expect(await page.inputValue("[data-testid=limit-key-concurrency]")).toBe("2")
      const set = page.locator("button[data-action=set-limit]")
      expect(await set.isDisabled()).toBe(true)
      expect(await set.getAttribute("title")).toContain("--allow-actions")
      expect(await page.locator("button[data-action=clear-limit]").isDisabled()).toBe(true)
      await page.click("[data-testid=nav-queues]")
      await page.waitForSelector('tr[data-queue="low"] [data-testid=queue-limit]')
      expect(await page.innerText('tr[data-queue="low"] [data-testid=queue-limit]')).toBe(
        "6000/m (burst 4), per key: concurrency 2; held until 2099-01-01 00:00:00.000 UTC"
      )
      noErrors(page)
      await page.close()
    } finally {
      await inspect(clearQueueLimit("low"))
    }
  })

  it("token login: the form is styled, a wrong token is said, the right one opens the dashboard; the token is never in a URL", async () => {
    const token = "s3cret-browser-token"
    const guarded = await serveDashboard({ redis: testRedisUrl(), port: 0, token })
    await context.clearCookies()
    const page = await context.newPage()
    const urls: Array<string> = []
    page.on("request", (r) => urls.push(r.url()))
    const stylesheet = page.waitForResponse((r) => r.url().endsWith("/assets/style.css"))
    try {
      const first = await page.goto(guarded.url)
      expect(first?.status()).toBe(401)
      expect((await stylesheet).status()).toBe(200)
      // style.css applied: the form is the centred card it describes
      expect(await page.locator("form.login").evaluate((form) => getComputedStyle(form).maxWidth)).toBe("420px")
      expect(await page.locator("[data-testid=login-error]").count()).toBe(0)
      await page.fill("input[name=token]", "not-the-token")
      await Promise.all([page.waitForURL(`${guarded.url}login`), page.click("button[type=submit]")])
      expect(await page.innerText("[data-testid=login-error]")).toContain("Wrong token")
      expect(await page.locator("form.login").evaluate((form) => getComputedStyle(form).maxWidth)).toBe("420px")
      await shot(page, "login-wrong-token.png")
      await page.fill("input[name=token]", token)
      await Promise.all([page.waitForURL(guarded.url), page.click("button[type=submit]")])
      await page.waitForSelector("main[data-ready]")
      expect(await page.locator("[data-testid=queues-table] tbody tr").count()).toBe(4)
      expect(page.url()).toBe(guarded.url)
      const cookies = await context.cookies(guarded.url)
      expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([
        [expect.stringMatching(/^effect_asynq_dash_[0-9a-f]{8}$/), true, "Strict"]
      ])
      expect(cookies[0]!.value).not.toContain(token)
      expect(urls.length).toBeGreaterThan(4)
      for (const url of urls) expect(url).not.toContain(token)
      expect(urls.some((u) => u.includes("not-the-token"))).toBe(false)
    } finally {
      await page.close()
      await context.clearCookies()
      await guarded.close()
    }
  })

  it("DNS rebinding: a page on attacker.example resolved to 127.0.0.1 gets 421 for the page, can read no API and cannot pause a queue", async () => {
    const page = await context.newPage()
    try {
      const landing = await page.goto(`http://${attackerHost}:${withActions.port}/`)
      expect(landing?.status()).toBe(421)
      // The attacker's script runs in that origin: same-origin requests, no Origin check applies.
      const answers = await page.evaluate(async () => {
        const read = await fetch("/api/queues")
        const pause = await fetch("/api/queues/default:pause", { method: "POST" })
        return { read: read.status, readBody: await read.text(), pause: pause.status }
      })
      expect(answers.read).toBe(421)
      expect(answers.readBody).not.toContain('"queue"')
      expect(answers.pause).toBe(421)
      expect((await inspect(getQueueInfo("default"))).paused).toBe(false)
    } finally {
      await page.close()
    }
  })

  it("with Redis gone, the page says in our words that Redis at its address is not answering (not the driver's text)", async () => {
    const own = await startRedisServer()
    const dash = await serveDashboard({ redis: own.url, port: 0 })
    const page = await context.newPage()
    try {
      await page.goto(dash.url)
      await page.waitForSelector("main[data-ready]")
      expect(await page.locator("main [role=alert]").count()).toBe(0)
      await own.stop()
      await page.reload()
      await page.waitForSelector("main[data-ready]")
      const shown = await page.innerText("main [role=alert]")
      expect(shown).toBe(
        `Error: Redis at 127.0.0.1:${own.port} is not answering (not reachable, or stalled); the dashboard tries again on the next request`
      )
      expect(await page.innerText("body")).not.toMatch(/max retries|maxRetriesPerRequest/i)
    } finally {
      await page.close()
      await dash.close()
      await own.stop()
    }
  })
})
