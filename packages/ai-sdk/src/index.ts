// AI SDK models drive the Switchyard loop
export { aiSdkModel } from './model';
export type { AiSdkModelOptions } from './model';
export { toAiSdkTools, customToolArgument } from './tool-table';
export type { CustomToolMode, ToolTarget } from './tool-table';
export { toAiSdkPrompt, toResultOutput, PROVIDER_METADATA_FIELD } from './prompt';

// AI SDK tools run through the Switchyard router
export { aiSdkTools, NO_APPROVER_MESSAGE, APPROVAL_DENIED_MESSAGE } from './tools';
export type { AiSdkToolsOptions } from './tools';

// Code Mode as AI SDK tools
export { codeModeTool } from './code-mode-tool';
export type { CodeModeToolOptions, CodeModeTools, CodeModeToolResult, CodeModeSessionLike } from './code-mode-tool';

export { VERSION } from './version';
