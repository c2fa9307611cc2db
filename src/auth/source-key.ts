/**
 * The key the admin-token throttle counts a source under (admin-throttle.ts). An IPv4
 * address is its own key; an IPv6 address is keyed by its /64 network, the smallest block
 * a provider hands one subscriber, so that whoever holds a /64 (2^64 addresses) counts as
 * one source, not 2^64. IPv6 text takes many forms for one address (compressed or expanded,
 * upper or lower case, a `%zone`, brackets, an IPv4 tail, IPv4-mapped `::ffff:a.b.c.d`):
 * all of them give one key, and an IPv4-mapped address gives the IPv4 address's key.
 * Anything else (no CF-Connecting-IP: "unknown") is its own key, as given.
 *
 * The input is a header cut to a few dozen characters (failure-audit.ts), so each step is
 * linear in a short string.
 */

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;
const IPV6_GROUPS = 8;
/** The groups (of 16 bits) of an IPv6 address that make its /64 network. */
const NETWORK_GROUPS = 4;
const IPV4_MAPPED_MARK = 0xffff;

/** The four bytes of a dotted-quad IPv4 address, or undefined. */
function ipv4Bytes(text: string): number[] | undefined {
  const found = IPV4.exec(text);
  if (!found) return undefined;
  const bytes = found.slice(1).map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

function hexGroups(text: string): number[] | undefined {
  if (text === "") return [];
  const groups = text.split(":");
  return groups.every((group) => HEX_GROUP.test(group)) ? groups.map((group) => parseInt(group, 16)) : undefined;
}

/** The eight 16-bit groups of an IPv6 address in any textual form, or undefined. */
function ipv6Groups(source: string): number[] | undefined {
  let text = source.startsWith("[") && source.endsWith("]") ? source.slice(1, -1) : source;
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(":");
  if (lastColon < 0) return undefined;
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    // An IPv4 tail (::ffff:192.0.2.1, 64:ff9b::192.0.2.1) is the last two groups.
    const bytes = ipv4Bytes(tail);
    if (!bytes) return undefined;
    const high = ((bytes[0]! << 8) | bytes[1]!).toString(16);
    const low = ((bytes[2]! << 8) | bytes[3]!).toString(16);
    text = `${text.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = hexGroups(halves[0]!);
  const rest = halves.length === 2 ? hexGroups(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const missing = IPV6_GROUPS - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...rest];
}

/**
 * The throttle's key for a source: "192.0.2.1" for IPv4 (and IPv4-mapped IPv6),
 * "2001:db8:0:1::/64" for IPv6, the text itself for anything else.
 *
 * @example
 * sourceKey("2001:DB8:0:1:ffff::2%eth0"); // "2001:db8:0:1::/64"
 */
export function sourceKey(source: string): string {
  const v4 = ipv4Bytes(source);
  if (v4) return v4.join(".");
  const groups = ipv6Groups(source);
  if (!groups) return source;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === IPV4_MAPPED_MARK;
  if (mapped) return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join(".");
  return `${groups
    .slice(0, NETWORK_GROUPS)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}
