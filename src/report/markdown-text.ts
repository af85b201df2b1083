/**
 * Text from data (model names, labels, messages) placed in a Markdown table cell or heading.
 * Escaped with Markdown's own backslash escapes, never HTML entities: `&lt;` would show as
 * written in a code span and in most Markdown viewers' source, while `\<` renders as `<` and
 * still cannot open an HTML tag. Backslashes first (so an escaped pipe stays escaped), then
 * pipes (a cell boundary), `<`, `>` and `&` (raw HTML and entities), and line breaks (a table
 * row or heading is one line).
 */
export function markdownText(text: string): string {
  return text
    .replace(/\\/gu, '\\\\')
    .replace(/([|<>&])/gu, '\\$1')
    .replace(/\r\n|\r|\n/gu, ' ');
}
