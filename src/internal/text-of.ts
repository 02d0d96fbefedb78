/**
 * A value as text for an error, a metric label or a page: `String(value)`, and for a value with no text
 * form (`Object.create(null)`, a throwing `toString`) its tag, `[object Object]`. Never throws.
 */
export function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return '[unprintable]';
    }
  }
}

/** An error as text for another error's message: `TypeError: …` for an Error, else its text. Never throws. */
export function errorTextOf(error: unknown): string {
  if (!(error instanceof Error)) return textOf(error);
  // Read through `textOf`: a name or message that is a Symbol, or a throwing getter, must not throw here.
  let name: unknown;
  let message: unknown;
  try {
    name = error.name;
    message = error.message;
  } catch {
    return textOf(error);
  }
  return `${textOf(name)}: ${textOf(message)}`;
}
