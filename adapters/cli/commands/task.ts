import * as Effect from "effect/Effect"
import { Argument, Command, Flag } from "effect/cli"
import { taskInfoToJson } from "../../shared/taskInfoJson.js"
import { archiveAll, type BulkVerb, checkBulkAction, deleteAll, runAll } from "../../../src/inspector/bulkActions.js"
import { groups } from "../../../src/inspector/groups.js"
import { getQueueInfo } from "../../../src/inspector/queueInfo.js"
import type { BulkProgress } from "../../../src/inspector/types.js"
import { cancelProcessing } from "../../../src/inspector/control.js"
import { getTaskInfo } from "../../../src/inspector/getTaskInfo.js"
import { listTasks } from "../../../src/inspector/listTasks.js"
import { archiveTask, deleteTask, runTask } from "../../../src/inspector/taskActions.js"
import type { TaskInfo } from "../../../src/steps/taskInfo.js"
import type { TaskState } from "../../../src/wire/keys.js"
import { withBroker } from "../connect.js"
import { ForceRequired } from "../exitCode.js"
import { duration, fields, preview, table, time } from "../format.js"
import { emit, progressLine } from "../output.js"

const states = ["pending", "active", "scheduled", "retry", "archived", "completed", "aggregating"] as const
const queueFlag = Flag.String("queue").pipe(Flag.withDescription("Queue name"))
const idFlag = Flag.String("id").pipe(Flag.withDescription("Task id"))
const stateFlag = Flag.Literals("state", states).pipe(Flag.withDescription("Task state"))
const groupFlag = Flag.String("group").pipe(Flag.withDescription("Group name (for --state aggregating)"), Flag.optional)
const opt = <A>(o: { _tag: "Some"; value: A } | { _tag: "None" }) => (o._tag === "Some" ? o.value : undefined)

/** Columns that matter for the state being listed. */
const listing = (state: TaskState, tasks: ReadonlyArray<TaskInfo>): string => {
  if (tasks.length === 0) return `No ${state} tasks.`
  const base = (t: TaskInfo) => [t.id, t.type, preview(t.payload)]
  switch (state) {
    case "active":
      return table(
        ["ID", "TYPE", "PAYLOAD", "ORPHANED"],
        tasks.map((t) => [...base(t), t.isOrphaned ? "yes" : "no"])
      )
    case "scheduled":
      return table(
        ["ID", "TYPE", "PAYLOAD", "PROCESS AT"],
        tasks.map((t) => [...base(t), time(t.nextProcessAt)])
      )
    case "retry":
      return table(
        ["ID", "TYPE", "PAYLOAD", "NEXT RETRY", "RETRIED", "MAX", "LAST ERROR"],
        tasks.map((t) => [
          ...base(t),
          time(t.nextProcessAt),
          t.retried,
          t.maxRetry,
          preview(new TextEncoder().encode(t.lastErr), 50)
        ])
      )
    case "archived":
      return table(
        ["ID", "TYPE", "PAYLOAD", "LAST FAILED", "LAST ERROR"],
        tasks.map((t) => [...base(t), time(t.lastFailedAt), preview(new TextEncoder().encode(t.lastErr), 50)])
      )
    case "completed":
      return table(
        ["ID", "TYPE", "PAYLOAD", "COMPLETED AT", "RESULT"],
        tasks.map((t) => [...base(t), time(t.completedAt), preview(t.result)])
      )
    case "aggregating":
      return table(
        ["ID", "TYPE", "PAYLOAD", "GROUP"],
        tasks.map((t) => [...base(t), t.group])
      )
    case "pending":
      return table(["ID", "TYPE", "PAYLOAD"], tasks.map(base))
  }
}

const ls = Command.make(
  "ls",
  {
    queue: queueFlag,
    state: stateFlag,
    group: groupFlag,
    page: Flag.Int("page").pipe(Flag.withDescription("Page number, from 1"), Flag.withDefault(1)),
    size: Flag.Int("size").pipe(Flag.withDescription("Tasks per page"), Flag.withDefault(30))
  },
  (a) =>
    withBroker(
      Effect.gen(function* () {
        const group = opt(a.group)
        const tasks = yield* listTasks(a.queue, a.state, {
          page: a.page,
          pageSize: a.size,
          ...(group === undefined ? {} : { group })
        })
        yield* emit(
          () => tasks.map(taskInfoToJson),
          () => listing(a.state, tasks)
        )
      })
    )
).pipe(Command.withDescription("List the tasks of a queue in one state, a page at a time (oldest first)"))

const inspect = Command.make("inspect", { queue: queueFlag, id: idFlag }, ({ queue, id }) =>
  withBroker(
    Effect.gen(function* () {
      const t = yield* getTaskInfo(queue, id)
      yield* emit(
        () => taskInfoToJson(t),
        () =>
          fields([
            ["id", t.id],
            ["queue", t.queue],
            ["type", t.type],
            ["state", t.state + (t.isOrphaned ? " (orphaned: lease expired)" : "")],
            ["payload", preview(t.payload, 200)],
            ["headers", Object.keys(t.headers).length === 0 ? "-" : JSON.stringify(t.headers)],
            ["max retry", t.maxRetry],
            ["retried", t.retried],
            ["last error", t.lastErr === "" ? "-" : t.lastErr],
            ["last failed at", time(t.lastFailedAt)],
            ["timeout", t.timeoutMs === 0 ? "-" : duration(t.timeoutMs)],
            ["deadline", time(t.deadline)],
            ["group", t.group === "" ? "-" : t.group],
            ["next process at", time(t.nextProcessAt)],
            ["retention", t.retentionMs === 0 ? "-" : duration(t.retentionMs)],
            ["completed at", time(t.completedAt)],
            ["result", preview(t.result, 200)]
          ])
      )
    })
  )
).pipe(Command.withDescription("Show one task"))

const action = (name: string, verb: string, f: typeof runTask, description: string) =>
  Command.make(name, { queue: queueFlag, id: idFlag }, ({ queue, id }) =>
    withBroker(
      Effect.flatMap(f(queue, id), (r) =>
        emit(
          () => ({ ...r, queue, action: name }),
          () => `${verb} task "${id}" (was ${r.from}).`
        )
      )
    )
  ).pipe(Command.withDescription(description))

/** How many tasks of a state (or of one aggregation group) a queue holds, from the inspector's queue info. */
const countInState = (queue: string, state: TaskState, group: string | undefined) =>
  Effect.gen(function* () {
    if (state === "aggregating" && group !== undefined)
      return (yield* groups(queue)).find((g) => g.group === group)?.size ?? 0
    return (yield* getQueueInfo(queue))[state]
  })

/**
 * A bulk command. A destructive one (`confirm`: archiveall, deleteall) without --force checks its
 * arguments, counts the tasks it would change and stops with ForceRequired (exit 2), changing nothing.
 */
const bulk = (
  name: string,
  verb: string,
  bulkVerb: BulkVerb,
  f: typeof runAll,
  description: string,
  confirm: boolean
) =>
  Command.make(
    name,
    {
      queue: queueFlag,
      state: stateFlag,
      group: groupFlag,
      batch: Flag.Int("batch").pipe(
        Flag.withDescription("Tasks per Redis call (keeps Redis responsive on huge queues)"),
        Flag.withDefault(1000)
      ),
      force: Flag.Boolean("force").pipe(
        Flag.withDescription(
          confirm
            ? `Do ${bulkVerb} the tasks; without it the command only says how many it would ${bulkVerb} (exit 2)`
            : "Accepted and ignored: runall removes nothing, so it needs no confirmation"
        ),
        Flag.withDefault(false)
      )
    },
    (a) =>
      withBroker(
        Effect.gen(function* () {
          const group = opt(a.group)
          if (confirm && !a.force) {
            yield* checkBulkAction(bulkVerb, a.state, { batchSize: a.batch, ...(group === undefined ? {} : { group }) })
            const count = yield* countInState(a.queue, a.state, group)
            const where = group === undefined ? `in queue "${a.queue}"` : `in group "${group}" of queue "${a.queue}"`
            return yield* new ForceRequired({
              count,
              message: `${name} would ${bulkVerb} ${count} ${a.state} task(s) ${where}; nothing was changed. Add --force to do it.`
            })
          }
          const progress = progressLine(verb.toLowerCase())
          let trimmed: number | undefined
          const onProgress = (p: BulkProgress) => {
            trimmed = p.trimmed
            progress.onProgress(p)
          }
          const n = yield* f(a.queue, a.state, {
            batchSize: a.batch,
            onProgress,
            ...(group === undefined ? {} : { group })
          }).pipe(Effect.ensuring(Effect.sync(progress.finish)))
          yield* emit(
            () => ({
              queue: a.queue,
              state: a.state,
              action: name,
              count: n,
              ...(trimmed === undefined ? {} : { trimmed })
            }),
            () =>
              `${verb} ${n} ${a.state} task(s) in queue "${a.queue}".` +
              (trimmed
                ? ` The archive's limits (90 days, 10,000 tasks) removed ${trimmed} older archived task(s).`
                : "")
          )
        })
      )
  ).pipe(Command.withDescription(description))

const cancel = Command.make(
  "cancel",
  { id: Argument.String("id").pipe(Argument.withDescription("Id of the running task")) },
  ({ id }) =>
    withBroker(
      Effect.flatMap(cancelProcessing(id), (r) =>
        emit(
          () => ({ id, ...r }),
          () =>
            r.receivers === 0
              ? `Sent cancel for task "${id}", but no server is listening.`
              : `Sent cancel for task "${id}" to ${r.receivers} server(s).`
        )
      )
    )
).pipe(Command.withDescription("Ask the server running a task to cancel it (best effort)"))

export const task = Command.make("task").pipe(
  Command.withDescription("Inspect and manage tasks"),
  Command.withSubcommands([
    ls,
    inspect,
    action("run", "Ran", runTask, "Move a scheduled, retry, archived, completed or aggregating task to pending"),
    action("archive", "Archived", archiveTask, "Archive a pending, scheduled, retry, completed or aggregating task"),
    action("delete", "Deleted", deleteTask, "Delete a task that is not active"),
    bulk(
      "runall",
      "Ran",
      "run",
      runAll,
      "Move every task of a state (scheduled, retry, archived, aggregating) to pending",
      false
    ),
    bulk(
      "archiveall",
      "Archived",
      "archive",
      archiveAll,
      "Archive every task of a state (pending, scheduled, retry, aggregating); needs --force, else only counts them",
      true
    ),
    bulk(
      "deleteall",
      "Deleted",
      "delete",
      deleteAll,
      "Delete every task of a state (pending, scheduled, retry, archived, completed, aggregating); needs --force, else only counts them",
      true
    ),
    cancel
  ])
)
