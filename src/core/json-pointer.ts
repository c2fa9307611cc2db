/**
 * JSON Pointers (RFC 6901) as filter rules use them: syntax checks with a reason a
 * person can act on, parsing into reference tokens, and reading a value.
 */

/** Why a pointer is malformed, or undefined when it is well formed. */
export function pointerProblem(pointer: unknown): string | undefined {
  if (typeof pointer !== "string") return 'must be a string such as "/user/name"';
  if (pointer !== "" && !pointer.startsWith("/")) return `"${pointer}" must be "" (the whole result) or start with "/"`;
  if (/~(?![01])/.test(pointer)) return `"${pointer}" has a "~" that is not "~0" (for ~) or "~1" (for /)`;
  return undefined;
}

/** The reference tokens of a well-formed pointer ("" → []). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Escapes one reference token. */
export function escapeToken(token: string): string {
  return token.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** A member or element of a container, or undefined. Array tokens must be canonical indices. */
export function child(container: unknown, token: string): { found: boolean; value: unknown } {
  if (Array.isArray(container)) {
    if (!/^(0|[1-9][0-9]*)$/.test(token)) return { found: false, value: undefined };
    const index = Number(token);
    return index < container.length ? { found: true, value: container[index] } : { found: false, value: undefined };
  }
  if (typeof container === "object" && container !== null && Object.hasOwn(container, token)) {
    return { found: true, value: (container as Record<string, unknown>)[token] };
  }
  return { found: false, value: undefined };
}
