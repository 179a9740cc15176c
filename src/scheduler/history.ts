/**
 * Enqueue history, as asynq keeps it: `asynq:scheduler_history:<entryId>`, a zset of
 * SchedulerEnqueueEvent (task id + enqueue time) scored by the enqueue time in unix seconds,
 * capped at the newest 1,000 events (written by the broker's `historyScript`; read it with the
 * inspector's `schedulerHistory`).
 */

/** asynq keeps this many events per entry. */
export const maxHistoryEvents = 1000
