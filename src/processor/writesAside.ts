/**
 * Slots given back by tasks whose outcome write failed, on a Redis Cluster. When a master dies, the
 * tasks of its queues that were running finish, and writing their outcome fails until its replica
 * has taken over (a failover takes seconds); each write is tried again while the lease holds
 * (settle.ts). Holding their slots meanwhile, they would keep the queues on healthy masters from
 * being served: at worst every slot holds a task of the failed queue (tasks fetched in one round
 * trip come from one queue and tend to finish together). So, as asynq's syncer does, such a task
 * gives its slot back: it stays in the registry (the heartbeat keeps its lease, shutdown waits for
 * it) while its write is tried again, and the fetch loop takes a task for its slot. At most
 * `max` tasks (the concurrency) are set aside at once, so the registry holds at most twice the
 * concurrency. The fetch loop also rests the task's queue (queueRest.ts) so that its next fetch does
 not wait on the failing shard. Only on a Cluster: on a single node a failed write means Redis itself is failing,
 * and fetches fail too.
 */
import type { ActiveTask, Registry } from "./registry.js"

export interface WritesAside {
  /** Watches a freshly leased task: when its outcome write first fails, it gives its slot back (`freed` is called). */
  readonly watch: (task: ActiveTask) => void
  /** How many tasks still in the registry gave their slot back. */
  readonly count: () => number
}

/** `failed` hears of every task whose outcome write failed (its queue's shard is failing); `freed`, when one gave its slot back. */
export const makeWritesAside = (
  registry: Registry,
  max: number,
  failed: (task: ActiveTask) => void,
  freed: () => void
): WritesAside => {
  const aside = new Set<ActiveTask>()
  const count = () => {
    if (aside.size === 0) return 0
    // A task leaves the set once its attempt is over (it left the registry).
    for (const t of aside) if (!registry.tasks.has(t)) aside.delete(t)
    return aside.size
  }
  return {
    watch: (task) => {
      task.onWriteFailed = () => {
        failed(task)
        if (count() >= max || !registry.tasks.has(task)) return
        aside.add(task)
        freed()
      }
    },
    count
  }
}
