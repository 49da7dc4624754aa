export { byProfile, currentProfile, report } from './profile';
export type { ReliabilityProfile } from './profile';
export { VERSION } from './version';
