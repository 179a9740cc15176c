/**
 * The dashboard's workflow pages in a real headless browser (Debian's chromium driven by
 * playwright-core), on executions made by the real engine in a worker process (workflowFixture.ts):
 * the Workflows page lists the workflows, a workflow's page its executions (complete, failed,
 * waiting); the failed one's page shows its steps and error, a running one its active run, and with actions allowed Resume
 * retries it until it completes; the waiting one shows its deferred as waiting; a read-only
 * dashboard shows no action buttons and its API refuses the action.
 * Skipped, saying so, only where /usr/bin/chromium is missing (`.ci/run` installs it).
 * With SCREENSHOTS_DIR set, it also saves screenshots of the workflow pages.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromium, type BrowserContext, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type DashboardServer, serveDashboard } from "../../adapters/dashboard/index.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { arrangeWorkflowData, type WorkflowData } from "./workflowFixture.js"

/** The page's document, inside functions run in the browser (tests compile without the DOM lib). */
declare const document: { querySelector(selector: string): { readonly textContent: string | null } | null }

const chromiumPath = "/usr/bin/chromium"
const hasChromium = existsSync(chromiumPath)
if (!hasChromium)
  console.warn(
    `dashboard workflow browser tests skipped: ${chromiumPath} is missing (apt-get install -y chromium; .ci/run installs it)`
  )
const screenshots = process.env.SCREENSHOTS_DIR

describe.skipIf(!hasChromium)("dashboard workflow pages in headless Chromium", { timeout: 90_000 }, () => {
  let data: WorkflowData
  let readOnly: DashboardServer
  let withActions: DashboardServer
  let context: BrowserContext
  let profile: string

  beforeAll(async () => {
    await flushTestDb()
    data = await arrangeWorkflowData(testRedisUrl())
    readOnly = await serveDashboard({ redis: testRedisUrl(), port: 0 })
    withActions = await serveDashboard({ redis: testRedisUrl(), port: 0, allowActions: true })
    profile = mkdtempSync(join(tmpdir(), "effect-asynq-chromium-"))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
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
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  type Watched = Page & { failures: Array<string> }
  /** Opens a view and waits until the script has rendered it. */
  const open = async (server: DashboardServer, hash: string): Promise<Watched> => {
    const page = (await context.newPage()) as Watched
    page.failures = []
    page.on("pageerror", (e) => page.failures.push(e.message))
    page.on("console", (m) => {
      if (m.type() === "error") page.failures.push(m.text())
    })
    await page.goto(`${server.url}${hash}`)
    await page.waitForSelector("main[data-ready]")
    return page
  }
  const shot = async (page: Page, name: string) => {
    if (screenshots === undefined) return
    mkdirSync(screenshots, { recursive: true })
    await page.screenshot({ path: join(screenshots, name), fullPage: true })
  }
  const rowOf = (id: string) => `tr[data-execution-id="${id}"]`

  it("read-only: the Workflows page lists the workflows; a workflow's executions with their state; a waiting deferred; no action buttons, and the API refuses the action", async () => {
    const page = await open(readOnly, "#/")
    await page.click("[data-testid=nav-workflows]")
    await page.waitForSelector("[data-testid=workflows-table]")
    expect(await page.locator("[data-testid=workflow-link]").allInnerTexts()).toEqual(["Shop.Order", "Shop.Refund"])
    await shot(page, "workflows.png")
    await page.click('tr[data-workflow="Shop.Order"] [data-testid=workflow-link]')
    await page.waitForSelector("[data-testid=executions-table]")
    expect(await page.innerText("[data-testid=workflow-name]")).toBe("Shop.Order")
    expect(await page.locator("[data-testid=executions-table] tbody tr").count()).toBe(3)
    expect(await page.innerText(`${rowOf(data.ids.done)} [data-testid=execution-state]`)).toBe("complete")
    expect(await page.innerText(`${rowOf(data.ids.failed)} [data-testid=execution-state]`)).toBe("failed")
    expect(await page.innerText(rowOf(data.ids.failed))).toContain("defect: card declined")
    expect(await page.innerText(`${rowOf(data.ids.waiting)} [data-testid=execution-state]`)).toBe("suspended")
    await shot(page, "workflow-executions.png")
    // the "failed" filter
    await page.click("[data-testid=filter-failed]")
    await page.waitForFunction(
      () =>
        document.querySelector("[data-testid=filter-failed]")?.textContent === "failed" &&
        document.querySelector("main")?.textContent?.includes("page 1") === true
    )
    await page.waitForSelector("[data-testid=filter-failed].active")
    expect(await page.locator("[data-testid=executions-table] tbody tr").count()).toBe(1)
    // the waiting execution: its deferred waiting, and no buttons on a read-only dashboard
    await page.click("[data-testid=filter-all]")
    await page.waitForSelector("[data-testid=filter-all].active")
    await page.click(`${rowOf(data.ids.waiting)} [data-testid=execution-link]`)
    await page.waitForSelector("[data-testid=execution-id]")
    expect(await page.innerText("[data-testid=exec-state]")).toBe("suspended")
    expect(await page.innerText('[data-testid=deferreds-table] tr[data-deferred="approval"]')).toContain("waiting")
    expect(await page.innerText('[data-testid=activities-table] tr[data-step="reserve"]')).toContain("reserved o-3")
    expect(await page.locator("button").count()).toBe(0)
    expect(await page.innerText("[data-testid=read-only-note]")).toContain("--allow-actions")
    const answer = await page.evaluate(async (id) => {
      const res = await fetch(`/api/workflows/Shop.Order/executions/${id}:resume`, { method: "POST" })
      return { status: res.status, body: (await res.json()) as { error: { code: string } } }
    }, data.ids.waiting)
    expect(answer).toEqual({ status: 403, body: { error: expect.objectContaining({ code: "ActionsDisabled" }) } })
    expect(await data.detail(data.ids.waiting)).toMatchObject({ state: "suspended", runs: 1 })
    expect(page.failures).toEqual(["Failed to load resource: the server responded with a status of 403 (Forbidden)"])
    await page.close()
  })

  it("a refund whose activity failed: the activity's error on its page, no buttons (complete)", async () => {
    const page = await open(withActions, `#/workflows/Shop.Refund/${data.ids.refund}`)
    expect(await page.innerText("[data-testid=exec-state]")).toBe("complete")
    expect(await page.innerText("[data-testid=exec-outcome]")).toBe("failure")
    expect(await page.innerText('[data-testid=activities-table] tr[data-step="refund"]')).toContain("failed")
    expect(await page.innerText("[data-testid=activity-error]")).toBe("gateway timeout for o-9")
    expect(await page.locator("button").count()).toBe(0)
    expect(page.failures).toEqual([])
    await page.close()
  })

  it("with --allow-actions: the failed execution shows its steps and error; Resume retries it, and it completes", async () => {
    const page = await open(withActions, "#/workflows")
    await page.click('tr[data-workflow="Shop.Order"] [data-testid=workflow-link]')
    await page.waitForSelector("[data-testid=executions-table]")
    await page.click(`${rowOf(data.ids.failed)} [data-testid=execution-link]`)
    await page.waitForSelector("[data-testid=execution-id]")
    expect(await page.innerText("[data-testid=execution-id]")).toBe(data.ids.failed)
    expect(await page.innerText("[data-testid=exec-state]")).toBe("failed")
    expect(await page.innerText("[data-testid=exec-error]")).toBe("defect: card declined")
    expect(await page.locator("[data-testid=activities-table] tbody tr").allInnerTexts()).toEqual([
      expect.stringMatching(/^reserve\s+1\s+done\s+"reserved o-2"$/)
    ])
    expect(JSON.parse(await page.innerText("[data-testid=exec-payload]"))).toEqual({ order: "o-2", kind: "fail" })
    await shot(page, "workflow-execution-failed.png")
    await data.fixCard()
    const resume = page.locator("button[data-action=resume]")
    expect(await resume.isDisabled()).toBe(false)
    await resume.click()
    await page.waitForFunction(
      () => document.querySelector("main [role=status]")?.textContent === "resumed: a run is enqueued"
    )
    // The worker runs it again; the page shows it complete once reloaded (bounded: 30 s).
    const deadline = Date.now() + 30_000
    for (;;) {
      if ((await page.innerText("[data-testid=exec-state]")) === "complete") break
      if (Date.now() > deadline) throw new Error(`the resumed execution did not complete\n${data.output()}`)
      await page.waitForTimeout(200)
      await page.reload()
      await page.waitForSelector("main[data-ready]")
    }
    expect(await page.innerText("[data-testid=exec-outcome]")).toBe("success")
    expect(await page.innerText("[data-testid=exec-runs]")).toBe("2")
    expect(await page.locator("[data-testid=activities-table] tbody tr").allInnerTexts()).toEqual([
      expect.stringMatching(/^charge\s+1\s+done\s+"charged"$/),
      expect.stringMatching(/^reserve\s+1\s+done\s+"reserved o-2"$/)
    ])
    expect(await page.innerText("[data-testid=exec-result]")).toContain("reserved o-2, charged, shipped")
    expect(await page.locator("button").count()).toBe(0)
    await shot(page, "workflow-execution.png")
    expect(page.failures).toEqual([])
    await page.close()
  })

  it("a running execution: its recorded activity done, and a running row for the active run (linked to its run task)", async () => {
    const id = await data.startHold("o-5")
    const page = await open(readOnly, `#/workflows/Shop.Order/${id}`)
    expect(await page.innerText("[data-testid=exec-state]")).toBe("running")
    const rows = await page.locator("[data-testid=activities-table] tbody tr").allInnerTexts()
    expect(rows).toEqual([
      expect.stringMatching(/^reserve\s+1\s+done\s+"reserved o-5"$/),
      expect.stringMatching(/^\(the active run\)\s+—\s+running\s+activities not recorded yet are running in it$/)
    ])
    const runTask = (await data.detail(id)).runTaskId!
    expect(await page.innerText(`a[href="#/tasks/workflow%3AShop.Order/${runTask}"]`)).toBe(runTask)
    await data.release()
    await data.until(id, (x) => x.state === "complete", "the released order complete")
    await page.reload()
    await page.waitForSelector("main[data-ready]")
    expect(await page.locator("[data-testid=activities-table] tbody tr").allInnerTexts()).toEqual([
      expect.stringMatching(/^pack\s+1\s+done\s+"packed"$/),
      expect.stringMatching(/^reserve\s+1\s+done\s+"reserved o-5"$/)
    ])
    expect(page.failures).toEqual([])
    await page.close()
  })

  it("with --allow-actions: approving the waiting execution's deferred shows it done; Cancel is offered until it completes", async () => {
    const page = await open(withActions, `#/workflows/Shop.Order/${data.ids.waiting}`)
    expect(await page.locator("button[data-action=cancel]").count()).toBe(1)
    await data.approve("ann")
    await data.until(data.ids.waiting, (x) => x.state === "complete", "the approved order complete")
    await page.reload()
    await page.waitForSelector("main[data-ready]")
    expect(await page.innerText("[data-testid=exec-state]")).toBe("complete")
    expect(await page.innerText('[data-testid=deferreds-table] tr[data-deferred="approval"]')).toMatch(
      /approval\s+done\s+"ann"/
    )
    expect(await page.locator("button").count()).toBe(0)
    expect(page.failures).toEqual([])
    await page.close()
  })
})
