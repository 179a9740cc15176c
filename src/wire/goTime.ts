/**
 * Go's `time.UnixDate` layout ("Mon Jan _2 15:04:05 MST 2006"), the form asynq's Deadline and
 * ProcessAt options print their time in, in the time's own location.
 */

/**
 * Where a time is shown: an IANA zone name ("UTC", "Asia/Tokyo") or a fixed zone like Go's
 * `time.FixedZone(name, offsetSeconds)`. For IANA zones the abbreviation comes from the runtime's
 * Intl data (en-US); where that has no letter abbreviation it is printed as Go prints a zone
 * without one ("+09", "+0530"). Go reads tzdata and may have letters there (Asia/Tokyo is "JST").
 */
export type GoZone = string | { readonly name: string; readonly offsetSeconds: number }

const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"] as const
const pad = (n: number, w = 2) => String(n).padStart(w, "0")

/** Go's name for a zone with no abbreviation: "+09", "-0330". */
const numericZone = (offsetSeconds: number) => {
  const sign = offsetSeconds < 0 ? "-" : "+"
  const a = Math.abs(offsetSeconds)
  const h = Math.floor(a / 3600)
  const m = Math.floor((a % 3600) / 60)
  return `${sign}${pad(h)}${m === 0 ? "" : pad(m)}`
}

const ianaZone = (ms: number, timeZone: string): { name: string; offsetSeconds: number } => {
  const part = (style: "longOffset" | "short") =>
    new Intl.DateTimeFormat("en-US", { timeZone, timeZoneName: style })
      .formatToParts(ms)
      .find((p) => p.type === "timeZoneName")?.value ?? ""
  const off = /^GMT(?:([+-])(\d\d):(\d\d))?$/.exec(part("longOffset"))
  if (!off) throw new Error(`cannot read the UTC offset of time zone ${timeZone}`)
  const offsetSeconds =
    off[1] === undefined ? 0 : (off[1] === "-" ? -1 : 1) * (Number(off[2]) * 3600 + Number(off[3]) * 60)
  const short = part("short")
  const name =
    /^[A-Z]{2,5}$/.test(short) && !(short === "GMT" && offsetSeconds !== 0) ? short : numericZone(offsetSeconds)
  return { name, offsetSeconds }
}

const resolveZone = (ms: number, zone: GoZone) => (typeof zone === "string" ? ianaZone(ms, zone) : zone)

/** Go's `t.Format(time.UnixDate)`, e.g. "Tue Jan  1 00:00:00 UTC 2030" (two spaces before a 1-digit day). */
export const goUnixDate = (time: Date | number, zone: GoZone = "UTC"): string => {
  const ms = typeof time === "number" ? time : time.getTime()
  const z = resolveZone(ms, zone)
  const d = new Date(ms + z.offsetSeconds * 1000)
  const y = d.getUTCFullYear()
  const year = y < 0 ? `-${pad(-y, 4)}` : pad(y, 4)
  const day = String(d.getUTCDate()).padStart(2, " ")
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${day} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${z.name} ${year}`
}

export interface ParsedGoTime {
  readonly date: Date
  /** The zone abbreviation as written. */
  readonly zone: string
  /** False when the abbreviation's offset was unknown and taken as 0, as Go's time.Parse does. */
  readonly offsetKnown: boolean
}

const unixDateRe =
  /^(?:Sun|Mon|Tue|Wed|Thu|Fri|Sat) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ( ?\d{1,2}) (\d\d):(\d\d):(\d\d) (\S+) (-?\d{4,})$/

/**
 * Reads a `time.UnixDate` string. "UTC", "GMT", "Z" and numeric zones ("+09", "-0330") have known
 * offsets; `zones` adds abbreviations (e.g. { JST: 9 * 3600 }); any other abbreviation is taken as
 * offset 0, as Go's time.Parse does. Throws on bad input.
 */
export const parseGoUnixDate = (text: string, zones: Readonly<Record<string, number>> = {}): ParsedGoTime => {
  const m = unixDateRe.exec(text)
  if (!m) throw new Error(`not a Go time.UnixDate time: ${JSON.stringify(text)}`)
  const [, mon, day, hh, mm, ss, zone, year] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string
  ]
  const num = /^([+-])(\d\d)(\d\d)?$/.exec(zone)
  let offset: number | undefined
  if (zones[zone] !== undefined) offset = zones[zone]
  else if (zone === "UTC" || zone === "GMT" || zone === "Z") offset = 0
  else if (num) offset = (num[1] === "-" ? -1 : 1) * (Number(num[2]) * 3600 + Number(num[3] ?? "0") * 60)
  const d = new Date(0)
  d.setUTCFullYear(Number(year), months.indexOf(mon as (typeof months)[number]), Number(day.trim()))
  d.setUTCHours(Number(hh), Number(mm), Number(ss), 0)
  return { date: new Date(d.getTime() - (offset ?? 0) * 1000), zone, offsetKnown: offset !== undefined }
}
