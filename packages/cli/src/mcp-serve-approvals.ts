import type { ApprovalDecision, ApprovalProvider, ApprovalRequest } from '@switchyard/protocol';
import type { CodeModeMcpServer } from '@switchyard/mcp';
import type { Session } from '@switchyard/session';

/**
 * The session's approvals under `mcp serve`: each one goes to the MCP client, naming the cell that
 * asks (the nested call's cell, from `tool-call-start`, and the `exec` call that created that cell,
 * from `cell-start`), so the server can route it to the task or call that waits on the cell.
 * Before the server runs, and after it closed, every request is denied.
 */
export function mcpClientApprovals(): { provider: ApprovalProvider; attach(session: Session, server: CodeModeMcpServer): () => void } {
  let server: CodeModeMcpServer | undefined;
  const cellOfCall = new Map<string, string>();
  const execCallOfCell = new Map<string, string>();
  return {
    provider: {
      requestApproval(request: ApprovalRequest): Promise<ApprovalDecision> {
        if (!server) return Promise.resolve('denied');
        const cellId = cellOfCall.get(request.callId);
        const execCallId = cellId === undefined ? undefined : execCallOfCell.get(cellId);
        return server.requestApproval(request, { ...(cellId !== undefined ? { cellId } : {}), ...(execCallId !== undefined ? { execCallId } : {}) });
      },
    },
    attach(session, attached) {
      server = attached;
      const stops = [
        session.on('tool-call-start', (event) => {
          if (event.source.kind === 'code-mode') cellOfCall.set(event.callId, event.source.cellId);
        }),
        session.on('tool-call-end', (event) => void cellOfCall.delete(event.callId)),
        session.on('tool-call-blocked', (event) => void cellOfCall.delete(event.callId)),
        session.on('tool-call-aborted', (event) => void cellOfCall.delete(event.callId)),
        session.on('cell-start', (event) => {
          if (event.execCallId !== undefined) execCallOfCell.set(event.cellId, event.execCallId);
        }),
        session.on('cell-end', (event) => void execCallOfCell.delete(event.cellId)),
      ];
      return () => {
        server = undefined;
        for (const stop of stops) stop();
        cellOfCall.clear();
        execCallOfCell.clear();
      };
    },
  };
}
