/** asynq trims the archive: tasks archived more than 90 days ago, and the oldest beyond 10,000. */
export const archiveMaxSize = 10_000
export const archiveMaxAgeMs = 90 * 24 * 60 * 60 * 1000

export const archiveCutoffSeconds = (nowMs: number): number => Math.floor((nowMs - archiveMaxAgeMs) / 1000)
