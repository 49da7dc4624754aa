import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { onTestFinished } from 'vitest';

/**
 * A real OpenTelemetry SDK tracer for one test: an in-memory exporter of the ended spans, and `open`,
 * the spans started and not ended yet. Call it inside a test; its provider shuts down when the test ends.
 */
export function recordingTracer(name = 'switchyard-test') {
  const exporter = new InMemorySpanExporter();
  const open = new Set<unknown>();
  const counter: SpanProcessor = {
    onStart: (span) => void open.add(span),
    onEnd: (span) => void open.delete(span),
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  };
  const provider = new BasicTracerProvider({ spanProcessors: [counter, new SimpleSpanProcessor(exporter)] });
  onTestFinished(() => provider.shutdown());
  return { exporter, open, tracer: provider.getTracer(name) };
}

/** The span id of a span's parent, undefined for a root span. */
export const parentSpanOf = (span: { parentSpanContext?: { spanId: string } }) => span.parentSpanContext?.spanId;

/** A span's own id (an OpenTelemetry `ReadableSpan`, read by shape). */
export const spanIdOf = (span: { spanContext(): { spanId: string } }): string => span.spanContext().spanId;
