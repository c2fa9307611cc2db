/**
 * The one Hono application class the gateway builds its routes with (the shell's /mcp,
 * /health and sign-in routes, the admin API, the console): Hono's own base class with its
 * TrieRouter alone. `Hono` from "hono" puts RegExpRouter and TrieRouter behind
 * SmartRouter, which on the first request keeps whichever of them accepts the route table;
 * the two match the same paths with the same parameters in the same order (Hono runs one
 * test suite against both), and our route tables are a few dozen paths, so carrying both
 * bought about 4 KiB of bundle that every cold isolate parses. Unlike Hono's `hono/tiny` preset (PatternRouter), TrieRouter keeps
 * strict paths: `/health/` is not `/health`.
 *
 * Lives in admin/ because shell/ imports admin/ (never the other way round).
 */
import { HonoBase, type HonoOptions } from "hono/hono-base";
import { TrieRouter } from "hono/router/trie-router";
import type { BlankEnv, BlankSchema, Env, Schema } from "hono/types";

/** A Hono application routed by TrieRouter; used everywhere in place of `Hono` from "hono". */
export class Hono<
  E extends Env = BlankEnv,
  S extends Schema = BlankSchema,
  BasePath extends string = "/",
> extends HonoBase<E, S, BasePath> {
  constructor(options: HonoOptions<E> = {}) {
    super(options);
    this.router = options.router ?? new TrieRouter();
  }
}
