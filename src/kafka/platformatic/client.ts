import type * as Platformatic from '@platformatic/kafka';

export type Consumer = Platformatic.Consumer;
export type Connection = Platformatic.Connection;

interface ClientError {
  apiCode?: number;
  errors?: ClientError[];
}

/** Whether a @platformatic/kafka error carries this Kafka error code (errors nest: retries, per partition). */
export function hasErrorCode(error: unknown, code: number): boolean {
  const e = error as ClientError | null | undefined;
  if (e === null || typeof e !== 'object') return false;
  return (
    e.apiCode === code || (Array.isArray(e.errors) && e.errors.some((inner) => hasErrorCode(inner, code)))
  );
}

/** Kafka protocol error codes the adapter reacts to. */
export const ErrorCodes = {
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_MEMBER_ID: 25,
  FENCED_INSTANCE_ID: 82,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
} as const;

/** The parsed response a @platformatic/kafka error carries (errors nest: retries, per partition). */
export function responseOf<Response>(
  error: unknown,
  has: (response: object) => boolean,
): Response | undefined {
  const e = error as { response?: unknown; errors?: unknown[] } | null | undefined;
  if (e === null || typeof e !== 'object') return undefined;
  if (typeof e.response === 'object' && e.response !== null && has(e.response)) return e.response as Response;
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const found = responseOf<Response>(inner, has);
    if (found !== undefined) return found;
  }
  return undefined;
}
