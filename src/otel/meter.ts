/**
 * The parts of the OpenTelemetry API this package uses, typed structurally so that its types compile
 * without `@opentelemetry/api` installed (an optional peer). Its `Meter` and `Attributes` fit.
 */

/** A value of an attribute (as in `@opentelemetry/api`). */
export type OpenTelemetryAttributeValue =
  | string
  | number
  | boolean
  | Array<null | undefined | string>
  | Array<null | undefined | number>
  | Array<null | undefined | boolean>;

/** Attributes of a data point (the API's `Attributes`). */
export interface OpenTelemetryAttributes {
  [key: string]: OpenTelemetryAttributeValue | undefined;
}

/** How an instrument describes itself. */
export interface OpenTelemetryInstrumentOptions {
  /** What it measures. */
  description?: string;
  /** Its unit (UCUM, e.g. `s`, `{message}`). */
  unit?: string;
}

/** A meter (the API's `Meter`). */
export interface OpenTelemetryMeter {
  /** An asynchronous gauge. */
  createObservableGauge(name: string, options?: OpenTelemetryInstrumentOptions): object;
  /** An asynchronous counter. */
  createObservableCounter(name: string, options?: OpenTelemetryInstrumentOptions): object;
  /** A histogram. */
  createHistogram(
    name: string,
    options?: OpenTelemetryInstrumentOptions,
  ): {
    /** Records one value. */
    record(value: number, attributes?: OpenTelemetryAttributes): void;
  };
  /** Observes `observables` together, by `callback`, at each collection. */
  addBatchObservableCallback(callback: (result: any) => void, observables: object[]): void;
  /** Stops what `addBatchObservableCallback` started. */
  removeBatchObservableCallback(callback: (result: any) => void, observables: object[]): void;
}

/**
 * A tracer (the API's `Tracer` fits): what `traced` starts its spans with. Typed structurally, as the
 * rest of this file, so the declarations compile without `@opentelemetry/api`.
 */
export interface OpenTelemetryTracer {
  /** Starts a span named `name`. */
  startSpan(name: string, options?: object, context?: object): object;
}
