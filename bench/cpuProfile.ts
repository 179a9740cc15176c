/**
 * V8's sampling profiler for the bench tools' children: `CPULOOP_CPUPROF=FILE` in a child's
 * environment makes `bench/workerCpuLoop.ts` and `bench/workflowCpuLoop.ts` write a .cpuprofile of
 * their measured run only (summarize it with `bench/cpuprofTop.ts`).
 */
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"

/** Starts V8's sampling profiler (100 µs); the function returned stops it and writes the .cpuprofile. */
export const startProfile = async (): Promise<(file: string) => Promise<void>> => {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: 100 })
  await session.post("Profiler.start")
  return async (file: string) => {
    const { profile } = await session.post("Profiler.stop")
    writeFileSync(file, JSON.stringify(profile))
    session.disconnect()
  }
}

/** The profile's file when this process was asked for one (`CPULOOP_CPUPROF`). */
export const profileFile = (): string | undefined => process.env.CPULOOP_CPUPROF
