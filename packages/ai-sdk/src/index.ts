// AI SDK models drive the Switchyard loop
export { aiSdkModel } from './model';
export type { AiSdkModelOptions } from './model';
export type { CustomToolMode } from './tool-table';

// AI SDK tools run through the Switchyard router
export { aiSdkTools } from './tools';
export type { AiSdkToolsOptions } from './tools';

// Switchyard executors as AI SDK tools (the reverse of aiSdkTools)
export { executorsAsAiSdkTools } from './executor-tools';
export type { ExecutorsAsAiSdkToolsOptions } from './executor-tools';

// Code Mode as AI SDK tools
export { codeModeTool } from './code-mode-tool';
export type { CodeModeToolOptions, CodeModeTools, CodeModeToolResult, CodeModeSessionLike } from './code-mode-tool';

// Turns as the AI SDK's UI message stream (useChat / Chat front ends)
export { toUIMessageStream, toUIMessageStreamResponse } from './ui-stream';
export type { UIMessageStreamOptions, UIMessageStreamResponseInit } from './ui-stream';
export { createUIApprovals } from './ui-approvals';
export type { UIApprovals, UIApprovalsOptions, PendingUIApproval, UIApprovalAnswerStatus } from './ui-approvals';
export type { ApprovalNotice, TurnEventLike } from './ui-translate';
export { createUIChat } from './ui-chat';
export type { UIChat, UIChatOptions, ChatSessionLike } from './ui-chat';
export { historyToUIMessages, uiMessagesToHistory } from './ui-messages';
export type { HistoryToUIMessagesOptions } from './ui-messages';
export type {
  ApprovalDescriptor,
  BackgroundData,
  CellData,
  HookData,
  ItemData,
  NestedCallData,
  PromptBlockedData,
  SwitchyardDataTypes,
  SwitchyardUIMessage,
} from './ui-data';

export { VERSION } from './version';
