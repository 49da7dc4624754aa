export { processInfo, running, workerChildren, type ProcessInfo } from '../../../tools/config/proc.ts';
