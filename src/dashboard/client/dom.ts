/// <reference lib="dom" />

/**
 * Builds an element. Text goes in as text nodes, never parsed as HTML, so a key such as
 * `<script>…</script>` shows as it is written: the page never sets `innerHTML` with data.
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

export function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string> = {},
): SVGElementTagNameMap[K] {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** Sets a node's text (as text), touching the DOM only when it changed. */
export function setText(node: Node, text: string): void {
  if (node.textContent !== text) node.textContent = text;
}
