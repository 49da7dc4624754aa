export { becomes, sleep, until } from './poll';
export { useCleanups } from './cleanups';
