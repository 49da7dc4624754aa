export { processInfo, running, workerChildren } from '@switchyard/config/proc';
