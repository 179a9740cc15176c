import * as Effect from "effect/Effect"
import { InvalidArgument } from "../broker/errors.js"
import { readExecutionsFields, scanExecutions } from "../broker/workflowExecutions.js"
import {
  type ExecutionStateFilter,
  matchesState,
  summaryOf,
  type WorkflowExecutionSummary,
  type WorkflowInspectOptions,
  workflowQueues
} from "./workflowTypes.js"

/** Options of `listWorkflowExecutions`. */
export interface ListExecutionsOptions extends WorkflowInspectOptions {
  /** Only executions in this state ("failed": suspended by SuspendOnFailure). */
  readonly state?: ExecutionStateFilter | undefined
  /** Where the previous page ended (its `cursor`); left out: the first page. */
  readonly cursor?: string | undefined
  /** About how many executions a page holds (default 30, 1 to 1000; a page may hold a few more or fewer). */
  readonly pageSize?: number | undefined
}

/** A page of executions and where the next one starts ("" when this was the last). */
export interface ExecutionsPage {
  readonly executions: ReadonlyArray<WorkflowExecutionSummary>
  readonly cursor: string
}

/** SCAN calls a page makes at most: each examines about COUNT keys, so a page's work is bounded whatever the keyspace's size. */
const maxScanCalls = 10

/**
 * One page of a workflow's executions with their state, found by SCAN (MATCH on the control
 * queue's `asynq:{q}:wf:x:*` pattern, COUNT from the page size, at most 10 calls a page), shard
 * after shard. The engine keeps no index of executions (one would cost a write per start and a
 * clean-up on expiry), so a page costs bounded work and the listing as a whole one pass over the
 * keyspace of the control queues' nodes. Order is Redis's SCAN order; an execution may appear
 * twice across pages when the keyspace is rehashed (SCAN's guarantee), never goes missing.
 */
export const listWorkflowExecutions = Effect.fn("Inspector.listWorkflowExecutions")(function* (
  workflow: string,
  options: ListExecutionsOptions = {}
) {
  const pageSize = options.pageSize ?? 30
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
    return yield* new InvalidArgument({
      field: "pageSize",
      message: `pageSize must be an integer from 1 to 1000, got ${pageSize}`
    })
  const queues = yield* workflowQueues(workflow, options)
  let shard = 0
  let scan = "0"
  if (options.cursor !== undefined && options.cursor !== "") {
    const m = /^(\d+):(\d+)$/.exec(options.cursor)
    if (!m || Number(m[1]) >= queues.length)
      return yield* new InvalidArgument({
        field: "cursor",
        message: `not a cursor of this listing: ${JSON.stringify(options.cursor)}`
      })
    shard = Number(m[1])
    scan = m[2]!
  }
  const count = Math.max(100, pageSize * 10)
  const out: Array<WorkflowExecutionSummary> = []
  for (let calls = 0; calls < maxScanCalls && shard < queues.length && out.length < pageSize; calls++) {
    const queue = queues[shard]!
    const page = yield* scanExecutions(queue, scan, count)
    const rows = yield* readExecutionsFields(queue, page.executionIds, ["state", "failed", "runs", "result"])
    page.executionIds.forEach((id, i) => {
      const [state, failed, runs, result] = rows[i] ?? []
      if (state === undefined && runs === undefined) return // expired between SCAN and the read
      const s = summaryOf(queue, id, state, failed, runs, result)
      if (matchesState(s, options.state)) out.push(s)
    })
    if (page.cursor === "0") {
      shard++
      scan = "0"
    } else scan = page.cursor
  }
  return {
    executions: out,
    cursor: shard >= queues.length ? "" : `${shard}:${scan}`
  } satisfies ExecutionsPage as ExecutionsPage
})

/** Options of `workflowExecutionsPage`: a page number instead of a cursor. */
export interface ExecutionsPageOptions extends Omit<ListExecutionsOptions, "cursor"> {
  /** The page, from 1 (default 1): page N reads the N - 1 pages before it (bounded work per page). */
  readonly page?: number | undefined
}

/** A numbered page of executions, and whether there are more after it. */
export interface NumberedExecutionsPage {
  readonly page: number
  readonly executions: ReadonlyArray<WorkflowExecutionSummary>
  readonly more: boolean
}

/**
 * Page N of a workflow's executions (what the CLI's `workflow ls --page` and the dashboard show):
 * `listWorkflowExecutions` followed N times from the first page, so a page is found again by its
 * number. Past the last page: an empty page. InvalidArgument for a page below 1.
 */
export const workflowExecutionsPage = Effect.fn("Inspector.workflowExecutionsPage")(function* (
  workflow: string,
  options: ExecutionsPageOptions = {}
) {
  const page = options.page ?? 1
  if (!Number.isInteger(page) || page < 1)
    return yield* new InvalidArgument({ field: "page", message: `page must be an integer >= 1, got ${page}` })
  const { page: _, ...listOptions } = options
  let result: ExecutionsPage = { executions: [], cursor: "" }
  let cursor: string | undefined
  for (let n = 1; n <= page; n++) {
    result = yield* listWorkflowExecutions(workflow, { ...listOptions, cursor })
    cursor = result.cursor
    if (cursor === "" && n < page) return { page, executions: [], more: false } satisfies NumberedExecutionsPage
  }
  return { page, executions: result.executions, more: result.cursor !== "" } satisfies NumberedExecutionsPage
})
