/**
 * What the scripts' return codes mean, in one table (BullMQ keeps such a map too): per script, each
 * code that is not a success → the tagged error it stands for, built from what the caller knows
 * (queue, id, message…). The descriptors' decoders (src/broker/*.ts) look codes up here; a code
 * not listed is a success code of that script.
 */
import type { TaskMessage } from "../wire/TaskMessage.js"
import { DuplicateTask, InvalidState, type LeaseLost, QueueNotEmpty, TaskIdConflict, TaskNotFound } from "./errors.js"
import { leaseLost } from "./leaseLost.js"

/** A task of a queue. */
export interface TaskRef {
  readonly queue: string
  readonly id: string
}
/** A task write; `detail` is appended to the message (e.g. the periodic entry that wrote it). */
export interface WriteRef {
  readonly msg: TaskMessage
  readonly detail?: string
}
/** A per-task inspector action and the state the script found the task in. */
export interface ActionRef extends TaskRef {
  readonly state: string
}

const taskIdConflict = ({ msg: { queue, id }, detail }: WriteRef) =>
  new TaskIdConflict({
    queue,
    id,
    message: `task ID conflicts with another task: a task with id "${id}" already exists in queue "${queue}"${detail ? ` (${detail})` : ""}`
  })

const duplicateTask = ({ msg: { queue, type, uniqueKey }, detail }: WriteRef) =>
  new DuplicateTask({
    queue,
    type,
    uniqueKey,
    message: `task already exists: a task of type "${type}" with the same payload is still unique-locked in queue "${queue}" (lock ${uniqueKey}${detail ? `; ${detail}` : ""})`
  })

const lost =
  (op: string) =>
  ({ queue, id }: TaskRef): LeaseLost =>
    leaseLost(queue, id, op)

const notFound = ({ queue, id }: TaskRef) =>
  new TaskNotFound({ queue, id, message: `task "${id}" not found in queue "${queue}"` })

export const replyCodes = {
  // Task writes: 1 written.
  enqueue: { 0: taskIdConflict, [-1]: duplicateTask },
  schedule: { 0: taskIdConflict, [-1]: duplicateTask },
  addToGroup: { 0: taskIdConflict, [-1]: duplicateTask },
  // Enqueue modes: {1, …} written, {2, id} throttled (enqueueThrottled).
  enqueueThrottled: { 0: taskIdConflict },
  enqueueDebounced: { 0: taskIdConflict },
  // {1, replaced} pending, {2, replaced} waiting (enqueueKeepLast).
  enqueueKeepLast: { 0: taskIdConflict },
  // Periodic occurrence: 1 written, 2 generated id taken (draw another), -2 already done by another instance.
  scheduler_claim: { 0: taskIdConflict, [-1]: duplicateTask },
  // Lease transitions: 1 moved, 2 already moved by this same call (a resend after a lost reply).
  complete: { 0: lost("complete") },
  retry: { 0: lost("retry") },
  archive: { 0: lost("archive") },
  requeue: { 0: lost("requeue") },
  // writeResult: the byte count written.
  writeResult: {
    [-1]: ({ queue, id }: TaskRef) =>
      new TaskNotFound({
        queue,
        id,
        message: `cannot write the result of task ${id}: no such task in queue "${queue}"`
      })
  },
  pauseQueue: {
    0: ({ queue }: { readonly queue: string }) => new InvalidState({ message: `queue "${queue}" is already paused` })
  },
  unpauseQueue: {
    0: ({ queue }: { readonly queue: string }) => new InvalidState({ message: `queue "${queue}" is not paused` })
  },
  // Inspector task actions: {1, previous state} done.
  inspector_runTask: {
    0: notFound,
    [-1]: ({ id, state }: ActionRef) =>
      new InvalidState({
        message:
          state === "active"
            ? `task "${id}" is already running (active); it cannot be run again — cancel it if it must stop`
            : `task "${id}" is already pending; it runs as soon as a worker is free`
      })
  },
  inspector_archiveTask: {
    0: notFound,
    [-1]: ({ id, state }: ActionRef) =>
      new InvalidState({
        message:
          state === "active"
            ? `task "${id}" is active (running) and cannot be archived; cancel it instead`
            : `task "${id}" is already archived`
      })
  },
  inspector_deleteTask: {
    0: notFound,
    [-1]: ({ id }: ActionRef) =>
      new InvalidState({ message: `task "${id}" is active (running) and cannot be deleted; cancel it first` })
  },
  // workflowStart: {1} started, {2, …} already started; {-1, name} the id is another workflow's execution.
  workflowStart: {
    [-1]: ({
      executionId,
      workflow,
      other
    }: {
      readonly executionId: string
      readonly workflow: string
      readonly other: string
    }) =>
      new InvalidState({
        message: `cannot start workflow "${workflow}" as execution "${executionId}": that execution id belongs to workflow "${other}"`
      })
  },
  // inspector_getTaskInfo: {msg, state, score, result}; nil (read as code 0) when the task does not exist.
  inspector_getTaskInfo: { 0: notFound },
  // inspector_deleteQueue: {1, deleted} removed, {0, left} a batch was deleted, {2, names left} a batch of per-key names was (call again).
  inspector_deleteQueue: {
    [-1]: ({ queue, count }: { readonly queue: string; readonly count: number; readonly done: number }) =>
      new QueueNotEmpty({
        queue,
        size: count,
        message: `queue "${queue}" is not empty (${count} task(s)); delete its tasks first or force the deletion`
      }),
    [-2]: ({ queue, count, done }: { readonly queue: string; readonly count: number; readonly done: number }) =>
      new InvalidState({
        message: `queue "${queue}" has ${count} active task(s); it cannot be deleted while tasks run${done > 0 ? ` (${done} task(s) were already deleted)` : ""}`
      })
  }
} as const

export type CodedScript = keyof typeof replyCodes
type Codes<S extends CodedScript> = (typeof replyCodes)[S]
type Builder<S extends CodedScript> = Codes<S>[keyof Codes<S>]
/** What the error builders of a script need to know. */
export type CodeContext<S extends CodedScript> = Builder<S> extends (ctx: infer C) => unknown ? C : never
/** The errors a script's codes stand for. */
export type CodeError<S extends CodedScript> = Builder<S> extends (ctx: never) => infer R ? R : never

/** The error `code` stands for in `script`'s replies, or undefined when it is a success code. */
export const codeError = <S extends CodedScript>(
  script: S,
  code: number,
  ctx: CodeContext<S>
): CodeError<S> | undefined => {
  const build = (replyCodes[script] as unknown as Record<number, ((c: CodeContext<S>) => CodeError<S>) | undefined>)[
    code
  ]
  return build === undefined ? undefined : build(ctx)
}
