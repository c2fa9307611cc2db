/**
 * Reads an admin request body as UTF-8 text, up to a limit: a body past the limit is
 * refused after reading `limit + 1` bytes, never held whole, whatever Content-Length says.
 */
import { readTextUpTo } from "../core/bounded-text";

/** The body's text, or `undefined` when it holds more than `limitBytes` bytes. */
export function readBodyText(request: Request, limitBytes: number): Promise<string | undefined> {
  return readTextUpTo(request.body, limitBytes);
}
