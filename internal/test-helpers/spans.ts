/** A span's own id (an OpenTelemetry `ReadableSpan`, read by shape). */
export const spanIdOf = (span: { spanContext(): { spanId: string } }): string => span.spanContext().spanId;
