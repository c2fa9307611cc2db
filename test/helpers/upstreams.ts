/**
 * UPSTREAMS values for tests: the fixture upstreams by name, plus any others.
 */
import { inject } from "vitest";

/** An UPSTREAMS var holding the fixture upstreams and `extra` (name → URL). */
export function upstreamsVar(extra: Record<string, string> = {}): string {
  const fixtures = inject("upstreams");
  return JSON.stringify([...fixtures, ...Object.entries(extra).map(([name, url]) => ({ name, url }))]);
}
