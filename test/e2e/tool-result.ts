/**
 * The text a tool result shows a model, for end-to-end tests that call tools with a real
 * client (SDK v1, SDK v2 or `@ai-sdk/mcp`): every text part, joined by newlines.
 */
export function textOf(result: unknown): string {
  const content = (result as { content?: { text?: string }[] }).content ?? [];
  return content.map((part) => part.text ?? "").join("\n");
}
