// AI SDK models drive the Switchyard loop
export { aiSdkModel } from './model';
export type { AiSdkModelOptions } from './model';
export type { CustomToolMode } from './tool-table';

// AI SDK tools run through the Switchyard router
export { aiSdkTools } from './tools';
export type { AiSdkToolsOptions } from './tools';

// Code Mode as AI SDK tools
export { codeModeTool } from './code-mode-tool';
export type { CodeModeToolOptions, CodeModeTools, CodeModeToolResult, CodeModeSessionLike } from './code-mode-tool';

export { VERSION } from './version';
