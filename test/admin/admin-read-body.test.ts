/**
 * The admin API's bounded body reads (src/admin/read-body.ts): a body past the limit is
 * refused, and its rest read and dropped up to MAX_DRAIN_BYTES first, so a client still
 * sending reads the answer (test/e2e/refused-body.test.ts shows it over a socket); a
 * declared length past the limit is refused before anything is read; a body within it is
 * returned whole.
 */
import { describe, expect, it } from "vitest";
import { readBodyBytes, readBodyText } from "../../src/admin/read-body";
import { MAX_DRAIN_BYTES } from "../../src/core/bounded-text";
import { countedJunk, drainedAtMost } from "../helpers/counted-body";

const LIMIT_BYTES = 512 * 1024;
const JUNK_BYTES = 5 * 1024 * 1024;
const put = (body: BodyInit) => new Request("http://gateway.test/admin/plan", { method: "PUT", body });

describe.each([
  ["readBodyText", readBodyText],
  ["readBodyBytes", readBodyBytes],
] as const)("%s", (_name, read) => {
  it("reads a refused body to its end, up to MAX_DRAIN_BYTES, and no further", async () => {
    const junk = countedJunk(JUNK_BYTES);
    expect(await read(put(junk.body), LIMIT_BYTES)).toBeUndefined();
    expect(junk.read()).toBe(JUNK_BYTES);
    const huge = countedJunk(64 * 1024 * 1024);
    expect(await read(put(huge.body), LIMIT_BYTES)).toBeUndefined();
    expect(huge.read()).toBeLessThanOrEqual(drainedAtMost(MAX_DRAIN_BYTES));
  });

  it("refuses a declared length past the limit, and returns a body within it whole", async () => {
    expect(await read(put(new Uint8Array(LIMIT_BYTES + 1)), LIMIT_BYTES)).toBeUndefined();
    const fits = await read(put("x".repeat(LIMIT_BYTES)), LIMIT_BYTES);
    const length = typeof fits === "string" ? fits.length : fits?.byteLength;
    expect(length).toBe(LIMIT_BYTES);
  });
});
