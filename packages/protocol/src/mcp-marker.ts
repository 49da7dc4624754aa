/**
 * The JSON Schema keyword (set to `true`) that marks an output schema as an MCP `CallToolResult`
 * wrapper. The MCP executors write it on every tool's output schema; the Code Mode declaration
 * renderer reads it to type that tool's result as `CallToolResult<T>`. One constant, so the
 * writer and the reader cannot drift apart.
 */
export const MCP_RESULT_SCHEMA_MARKER = 'x-switchyard-mcp';
