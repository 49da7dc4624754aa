export { processInfo, running, workerChildren } from '../../../tools/config/proc.ts';
