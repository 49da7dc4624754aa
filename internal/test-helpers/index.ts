export { becomes, sleep, until } from './poll';
export { useCleanups } from './cleanups';
export { cellTexts, contentTexts, say, text, texts, withoutTime } from './items';
export { uniqueSleepSeconds } from './markers';
