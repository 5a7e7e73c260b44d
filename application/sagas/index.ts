// Every saga the platform runs. Later features (connector calls, orchestration dispatch,
// mail) add theirs here.
import type { Saga } from './saga';

export const allSagas: readonly Saga[] = [];
