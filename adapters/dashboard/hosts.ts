/**
 * Which Host a dashboard answers to: the guard against DNS rebinding. A page on a name the attacker
 * controls (`attacker.example`), re-pointed at 127.0.0.1 once loaded, sends its requests to the
 * dashboard as same-origin requests for that name: no Origin check sees them, but their Host header
 * still says `attacker.example`. So a name is answered only when it is known to be this dashboard's:
 * `localhost`, the name it is bound to, or one in `allowedHosts`. An IP literal (`127.0.0.1`,
 * `[::1]`, `192.168.1.5`) is always answered: it is not looked up in DNS, so it cannot be rebound,
 * and a browser sends one only when the user typed it. The port is not compared (the browser already
 * reached this server's port).
 */
import { isIP } from "node:net"
import { InvalidArgument } from "../../src/broker/errors.js"

/** A host as a Host header carries it, without port, lower case, no trailing dot; IPv6 in brackets. */
const canonical = (hostname: string): string => hostname.toLowerCase().replace(/\.$/, "")

const isIpLiteral = (hostname: string): boolean => hostname.startsWith("[") || isIP(hostname) === 4

const label = "[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
const dnsName = new RegExp(`^${label}(\\.${label})*\\.?$`, "i")

/**
 * Checks and normalises `allowedHosts` (host names or IP addresses, without scheme, port or path);
 * throws InvalidArgument naming the first bad entry.
 */
export const parseAllowedHosts = (hosts: ReadonlyArray<string> | undefined, where: string): ReadonlyArray<string> => {
  if (hosts === undefined) return []
  if (!Array.isArray(hosts))
    throw new InvalidArgument({
      field: "allowedHosts",
      message: `${where}: allowedHosts must be an array of host names, e.g. ["dash.example.com"]`
    })
  return hosts.map((raw: unknown) => {
    const bad = (why: string) =>
      new InvalidArgument({
        field: "allowedHosts",
        message: `${where}: allowed host ${JSON.stringify(raw)} ${why}; give a host name or IP address alone, e.g. "dash.example.com"`
      })
    if (typeof raw !== "string" || raw.trim() === "") throw bad("is empty")
    const host = raw.trim()
    if (host.includes("://") || host.includes("/")) throw bad("has a scheme or a path")
    if (isIP(host) === 6) return `[${host.toLowerCase()}]`
    if (host.startsWith("[") && host.endsWith("]") && isIP(host.slice(1, -1)) === 6) return host.toLowerCase()
    if (host.includes(":")) throw bad("has a port (any port is accepted)")
    if (host.includes("*")) throw bad("has a wildcard (list each name)")
    if (!dnsName.test(host)) throw bad("is not a valid host name")
    return canonical(host)
  })
}

/** The hostname of a Host header value (`name`, `name:port`, `[v6]:port`), or undefined when malformed. */
export const hostnameOf = (hostHeader: string): string | undefined => {
  try {
    const url = new URL(`http://${hostHeader}`)
    // Anything beyond host[:port] (a path, credentials) is not a Host header.
    if (
      url.username !== "" ||
      url.password !== "" ||
      url.pathname !== "/" ||
      url.search !== "" ||
      url.hash !== "" ||
      hostHeader.includes("/")
    )
      return undefined
    return canonical(url.hostname)
  } catch {
    return undefined
  }
}

/** Whether a bind address or host name is this machine only (127.0.0.0/8, ::1, localhost). */
export const isLoopback = (host: string): boolean => {
  const h = canonical(host.replace(/^\[|\]$/g, ""))
  return h === "localhost" || h === "::1" || (isIP(h) === 4 && h.startsWith("127."))
}

/** The reason a request is refused for its Host, or undefined when the host is answered. */
export type HostCheck = (hostHeader: string, trustedHost?: string) => string | undefined

/**
 * The check for a dashboard answering `localhost`, any IP literal, the given names (normalised by
 * parseAllowedHosts) and, per request, a host the platform vouches for (a Lambda URL's domain).
 */
export const makeHostCheck = (allowed: ReadonlyArray<string>): HostCheck => {
  const names = new Set(["localhost", ...allowed])
  return (hostHeader, trustedHost) => {
    const hostname = hostnameOf(hostHeader)
    if (hostname === undefined) return `the Host header ${JSON.stringify(hostHeader)} is malformed`
    if (names.has(hostname) || isIpLiteral(hostname)) return undefined
    if (trustedHost !== undefined && hostnameOf(trustedHost) === hostname) return undefined
    return `this dashboard does not answer to the host "${hostname}" (a guard against DNS rebinding); if that name is yours, allow it with --allowed-host ${hostname} (allowedHosts in code)`
  }
}

/**
 * Whether a page's Origin hostname (as `URL.hostname` gives it) is one of the configured names
 * (normalised by parseAllowedHosts): a page the operator's own public name serves. Only the
 * configured names: `localhost` and IP addresses, which the Host check always answers, are not
 * accepted as another Origin (a page on another local port or machine is another site).
 */
export const makeOriginCheck = (allowed: ReadonlyArray<string>): ((hostname: string) => boolean) => {
  const names = new Set(allowed)
  // URL.hostname keeps an IPv6 address in brackets, as parseAllowedHosts stores it.
  return (hostname) => names.has(canonical(hostname))
}
