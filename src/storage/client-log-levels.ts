/**
 * The log level a client asked for (`logging/setLevel`, 2025 revisions), per session,
 * in KV: the session token is sealed once at initialize and cannot carry it, and any
 * isolate may serve the client's next call. Each isolate caches what it read for
 * `LEVEL_CACHE_MS` (so a client that never asked costs one KV read per isolate per
 * that time, and nothing else); the level expires with the session.
 */
import { META_KEYS } from "../core/revisions";

const LOG_LEVEL_KEY_PREFIX = "log-level/";
/** How long an isolate trusts its last look at a session's level. */
const LEVEL_CACHE_MS = 10_000;
const LEVEL_CACHE_ENTRIES = 10_000;
/** KV's minimum expiration TTL. */
const MIN_KV_TTL_S = 60;

/** The levels of RFC 5424 that MCP uses, least severe first. */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where a 2026-07-28 request asks for log messages: a key of its `params._meta`. */
export const LOG_LEVEL_META_KEY = META_KEYS.logLevel;

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/** True when a message at `level` goes to a client that asked for `threshold` and above. */
export function atLeast(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}

const cache = new Map<string, { readonly at: number; readonly level: LogLevel | null }>();

function remember(sessionId: string, level: LogLevel | null): void {
  if (cache.size >= LEVEL_CACHE_ENTRIES) cache.clear();
  cache.set(sessionId, { at: Date.now(), level });
}

/**
 * Records the level session `sessionId` asked for, until it expires (`expiresAt`, s).
 *
 * @example
 * await saveLogLevel(kv, session.id, "info", session.expiresAt);
 */
export async function saveLogLevel(
  kv: KVNamespace,
  sessionId: string,
  level: LogLevel,
  expiresAt: number,
): Promise<void> {
  remember(sessionId, level);
  const expiration = Math.max(expiresAt, Math.floor(Date.now() / 1000) + MIN_KV_TTL_S);
  await kv.put(LOG_LEVEL_KEY_PREFIX + sessionId, level, { expiration });
}

/** The level session `sessionId` asked for, or null when it never asked. */
export async function loadLogLevel(kv: KVNamespace, sessionId: string): Promise<LogLevel | null> {
  const cached = cache.get(sessionId);
  if (cached && Date.now() - cached.at < LEVEL_CACHE_MS) return cached.level;
  const stored = await kv.get(LOG_LEVEL_KEY_PREFIX + sessionId);
  const level = isLogLevel(stored) ? stored : null;
  remember(sessionId, level);
  return level;
}
