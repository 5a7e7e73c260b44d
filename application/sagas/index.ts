// Every saga the platform runs. Later features (connector calls, orchestration dispatch,
// mail) add theirs here.
import type { AnySaga } from './saga';

export const allSagas: readonly AnySaga[] = [];
