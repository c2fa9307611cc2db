/**
 * Runs once before the end-to-end files: unpacks the Chromium that ships inside
 * @sparticuz/chromium. Each console file launches it, and the package unpacks the binary
 * to /tmp on first use; two files starting at once on a new machine (CI's) each write and
 * spawn it, and one spawn fails with ETXTBSY (the other is still writing the file).
 */
import chromium from "@sparticuz/chromium";

export default async function unpackChromium(): Promise<void> {
  await chromium.executablePath();
}
