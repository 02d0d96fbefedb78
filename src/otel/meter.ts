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

interface InstrumentOptions {
  description?: string;
  unit?: string;
}

/** A meter (the API's `Meter`). */
export interface OpenTelemetryMeter {
  createObservableGauge(name: string, options?: InstrumentOptions): object;
  createObservableCounter(name: string, options?: InstrumentOptions): object;
  createHistogram(
    name: string,
    options?: InstrumentOptions,
  ): { record(value: number, attributes?: OpenTelemetryAttributes): void };
  addBatchObservableCallback(callback: (result: any) => void, observables: object[]): void;
  removeBatchObservableCallback(callback: (result: any) => void, observables: object[]): void;
}
