import type { DispatcherFrame } from '../frame';

/** What a dispatcher is doing, as the page names and colours it (`data-state`, see page-style.ts). */
export type StateName = 'flowing' | 'running' | 'idle' | 'not-settling' | 'held';

/**
 * Each state's name on the page and what it means, in the order the legend lists them. Only the last
 * two are a problem: orange and red are kept for them.
 */
export const STATES: ReadonlyArray<{
  readonly name: StateName;
  readonly label: string;
  readonly meaning: string;
}> = [
  {
    name: 'flowing',
    label: 'flowing',
    meaning:
      'messages settle. A full window is normal under load: intake waits for the handlers, which set the pace.',
  },
  {
    name: 'running',
    label: 'running',
    meaning:
      'messages are in flight and none settled in the last update, with room in the window: long handlers.',
  },
  { name: 'idle', label: 'idle', meaning: 'nothing in flight, nothing taken in.' },
  {
    name: 'not-settling',
    label: 'not settling',
    meaning:
      'the window is full and nothing settled in the last update: the handlers are slow or hung, and intake has stopped.',
  },
  {
    name: 'held',
    label: 'held by a key',
    meaning:
      'one key holds at least half of the window or of the parking area; nothing else is taken in until its messages drain.',
  },
];

/** The state of a frame, and its text (a held intake names its key). */
export function stateOf(frame: DispatcherFrame): { readonly name: StateName; readonly text: string } {
  if (frame.heldBy !== null) return { name: 'held', text: `held by ${frame.heldBy.key}` };
  const settling = frame.settledPerSecond > 0;
  if (frame.inFlight > frame.stallThreshold && !settling)
    return { name: 'not-settling', text: 'not settling' };
  if (settling) return { name: 'flowing', text: 'flowing' };
  if (frame.inFlight === 0 && frame.admittedPerSecond === 0) return { name: 'idle', text: 'idle' };
  return { name: 'running', text: 'running' };
}
