import * as Effect from "effect/Effect"
import { Argument, Command, Flag } from "effect/cli"
import { InvalidArgument } from "../../../src/broker/errors.js"
import { getWorkflowExecution } from "../../../src/inspector/getWorkflowExecution.js"
import { workflowExecutionsPage } from "../../../src/inspector/listWorkflowExecutions.js"
import {
  cancelWorkflowExecution,
  resumeWorkflowExecution,
  type WorkflowActionResult
} from "../../../src/inspector/workflowActions.js"
import {
  executionStateFilters,
  type WorkflowExecutionSummary,
  type WorkflowInspectOptions
} from "../../../src/inspector/workflowTypes.js"
import { withBroker } from "../connect.js"
import { fields, table, time } from "../format.js"
import { emit } from "../output.js"

const workflowArg = Argument.String("workflow").pipe(Argument.withDescription("Workflow name (its Workflow.make tag)"))
const idArg = Argument.String("id").pipe(Argument.withDescription("Execution id"))
const where = {
  prefix: Flag.String("prefix").pipe(
    Flag.withDescription("Control-queue prefix: the engine layer's `queue` option"),
    Flag.withDefault("workflow")
  ),
  shards: Flag.Int("shards").pipe(
    Flag.withDescription("The engine layer's `shards` (default: the workflow's control queues found in asynq:queues)"),
    Flag.optional
  )
}
const opt = <A>(o: { _tag: "Some"; value: A } | { _tag: "None" }) => (o._tag === "Some" ? o.value : undefined)
const whereOf = (a: {
  prefix: string
  shards: { _tag: "Some"; value: number } | { _tag: "None" }
}): WorkflowInspectOptions => ({ queue: a.prefix, shards: opt(a.shards) })

/** A value stored as JSON, in one line of at most `max` characters. */
const json = (v: unknown, max = 60): string => {
  if (v === undefined) return "-"
  const s = JSON.stringify(v) ?? String(v)
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}

/** A line of text cut to `max` characters. */
const cut = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s)

const stateText = (e: WorkflowExecutionSummary): string => (e.state === "suspended" && e.failed ? "failed" : e.state)

const ls = Command.make(
  "ls",
  {
    workflow: workflowArg,
    state: Flag.Literals("state", executionStateFilters).pipe(
      Flag.withDescription("Only executions in this state (failed: suspended by SuspendOnFailure)"),
      Flag.optional
    ),
    page: Flag.Int("page").pipe(
      Flag.withDescription("Page number, from 1 (page N reads the N pages before it: bounded work per page)"),
      Flag.withDefault(1)
    ),
    size: Flag.Int("size").pipe(
      Flag.withDescription("About how many executions per page (1 to 1000)"),
      Flag.withDefault(30)
    ),
    ...where
  },
  (a) =>
    withBroker(
      Effect.gen(function* () {
        if (!Number.isInteger(a.page) || a.page < 1)
          return yield* new InvalidArgument({ field: "page", message: `--page must be an integer >= 1, got ${a.page}` })
        if (!Number.isInteger(a.size) || a.size < 1 || a.size > 1000)
          return yield* new InvalidArgument({
            field: "size",
            message: `--size must be an integer from 1 to 1000, got ${a.size}`
          })
        const state = opt(a.state)
        const page = yield* workflowExecutionsPage(a.workflow, {
          ...whereOf(a),
          page: a.page,
          pageSize: a.size,
          ...(state === undefined ? {} : { state })
        })
        const rows = page.executions
        yield* emit(
          () => ({ workflow: a.workflow, page: a.page, more: page.more, executions: rows }),
          () =>
            (rows.length === 0
              ? `No ${state ?? ""}${state === undefined ? "" : " "}executions of workflow "${a.workflow}" on page ${a.page}.`
              : table(
                  ["ID", "STATE", "RUNS", "OUTCOME", "ERROR"],
                  rows.map((e) => [
                    e.executionId,
                    stateText(e),
                    e.runs,
                    e.outcome ?? "-",
                    e.error === undefined ? "-" : cut(e.error, 60)
                  ])
                )) + (page.more ? `\nMore: --page ${a.page + 1}` : "")
        )
      })
    )
).pipe(
  Command.withDescription(
    "List a workflow's executions with their state, a page at a time (bounded SCAN of its control queues)"
  )
)

const inspect = Command.make("inspect", { workflow: workflowArg, id: idArg, ...where }, (a) =>
  withBroker(
    Effect.gen(function* () {
      const x = yield* getWorkflowExecution(a.workflow, a.id, whereOf(a))
      yield* emit(
        () => x,
        () => {
          const head = fields([
            ["workflow", x.workflow],
            ["execution", x.executionId],
            ["control queue", x.queue],
            [
              "state",
              stateText(x) +
                (x.interrupt === undefined
                  ? ""
                  : ` (${x.interrupt === "interrupt" ? "cancel" : "unsafe cancel"} requested)`)
            ],
            ["runs", x.runs],
            ["run task", x.runTaskId ?? "-"],
            ["payload", json(x.payload, 200)],
            ["outcome", x.outcome ?? "-"],
            ["error", x.error ?? "-"],
            ["result", json(x.result, 200)],
            ["parent", x.parent === undefined ? "-" : `${x.parent.workflow} ${x.parent.executionId}`],
            // The version recorded at start, when one was.
            ...(x.version === undefined ? [] : [["version", x.version] as const])
          ])
          const running =
            x.state === "running" ? "\n(a run is active: activities not listed yet may be running in it)" : ""
          const acts =
            x.activities.length === 0
              ? `Activities: none stored.${running}`
              : `Activities:\n${table(
                  ["NAME", "ATTEMPT", "STATUS", "RESULT / ERROR"],
                  x.activities.map((s) => [
                    s.name,
                    s.attempt,
                    s.status,
                    s.status === "done" ? json(s.result) : cut(s.error ?? "", 60)
                  ])
                )}${running}`
          const defs =
            x.deferreds.length === 0
              ? "Deferreds: none completed or waited on."
              : `Deferreds:\n${table(
                  ["NAME", "STATUS", "VALUE / ERROR"],
                  x.deferreds.map((d) => [
                    d.name,
                    d.status,
                    d.status === "done" ? json(d.value) : d.status === "waiting" ? "-" : cut(d.error ?? "", 60)
                  ])
                )}`
          const clocks =
            x.clocks.length === 0
              ? "Clocks: none."
              : `Clocks:\n${table(
                  ["NAME", "STATUS", "DUE AT"],
                  x.clocks.map((c) => [c.name, c.status, c.dueAtMs === undefined ? "-" : time(new Date(c.dueAtMs))])
                )}`
          return [head, acts, defs, clocks].join("\n\n")
        }
      )
    })
  )
).pipe(Command.withDescription("Show one execution: state, payload, result, activities, deferreds and clocks"))

const action = (name: "resume" | "cancel", f: typeof resumeWorkflowExecution, verb: string, description: string) =>
  Command.make(name, { workflow: workflowArg, id: idArg, ...where }, (a) =>
    withBroker(
      Effect.flatMap(f(a.workflow, a.id, whereOf(a)), (r: WorkflowActionResult) =>
        emit(
          () => ({ workflow: a.workflow, action: name, ...r }),
          () =>
            `${verb} execution "${a.id}" of workflow "${a.workflow}" (was ${r.from === "suspended" && r.failed ? "failed" : r.from}): ` +
            (r.outcome === "run-enqueued" ? "a run is enqueued." : "its pending or running run will see it.")
        )
      )
    )
  ).pipe(Command.withDescription(description))

export const workflow = Command.make("workflow").pipe(
  Command.withDescription("See and operate durable workflow executions (effect-asynq/workflow)"),
  Command.withSubcommands([
    ls,
    inspect,
    action(
      "resume",
      resumeWorkflowExecution,
      "Resumed",
      "Resume an execution as Workflow.resume does; this is also how a failed (SuspendOnFailure) execution is retried"
    ),
    action(
      "cancel",
      cancelWorkflowExecution,
      "Cancelled",
      "Cancel an execution as Workflow.interrupt does (finalizers and compensations run; a final result is recorded)"
    )
  ])
)
