// Lease holder ids that let a process tell when the holder of a lease is a process of its own
// machine that is gone (crashed, killed), so that a restarted server takes its projections and
// sagas over at once instead of waiting LEASE_TTL_MS for the dead holder's leases to lapse.
//
// The id is `hostname:pid:random:scope`, where `scope` is a digest of the boot id and the PID
// namespace: two processes with the same scope see the same process table (/proc), so it
// answers for the holder. Only then is a holder judged, and only a PID with no process, or a
// zombie, means gone; a PID reused by another process looks alive, and the lease lapses as before.
// Where /proc does not tell the boot and the namespace (not Linux), nothing is ever judged
// gone. A wrong judgement could not make two writers anyway: projection commits and saga
// checkpoints are fenced by the holder (docs/decisions.md, "Leases").

import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import os from 'node:os';

/** What a process needs to know of the processes sharing its machine. */
export interface LocalProcesses {
  /** This process's holder id. */
  holderId(): string;
  /** True only when `holder` (maybe with a `/<part>` suffix) is a process of this machine and namespace that no longer runs. */
  isGone(holder: string): boolean;
}

export interface LocalProcessFacts {
  hostname: string;
  pid: number;
  /** null where the boot and PID namespace cannot be told apart. */
  scope: string | null;
  /** false when no process has the PID, or only a zombie (it ended, and its parent has not reaped it yet). */
  exists(pid: number): boolean;
}

const HOLDER = /^(.+):(\d+):([0-9a-f]{8}):([0-9a-f]{8})(?:\/.*)?$/;

export function localProcesses(facts: LocalProcessFacts = thisMachine()): LocalProcesses {
  return {
    holderId: () => `${facts.hostname}:${facts.pid}:${randomBytes(4).toString('hex')}:${facts.scope ?? '00000000'}`,
    isGone(holder) {
      if (facts.scope === null) return false;
      const match = HOLDER.exec(holder);
      if (!match) return false;
      const [, hostname, pid, , scope] = match;
      if (hostname !== facts.hostname || scope !== facts.scope) return false;
      const holderPid = Number(pid);
      // This very process (another of its holders, the projection thread's): alive.
      if (holderPid === facts.pid) return false;
      return !facts.exists(holderPid);
    },
  };
}

function thisMachine(): LocalProcessFacts {
  return { hostname: os.hostname(), pid: process.pid, scope: machineScope(), exists: processExists };
}

/** A digest of the boot id and the PID namespace; null off Linux. */
function machineScope(): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const namespace = readlinkSync('/proc/self/ns/pid');
    return createHash('sha256').update(`${boot}\n${namespace}`).digest('hex').slice(0, 8);
  } catch {
    return null;
  }
}

/**
 * Whether a process runs with that PID: /proc has it, and it is not a zombie. A killed process
 * stays a zombie until its parent reaps it, which an init that is not a shell's may do seconds
 * later (seen here: a server killed with -9 was a zombie for about 3 s), and kill(pid, 0)
 * answers for a zombie as for a live process.
 */
function processExists(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // EACCES and the like: something runs there; only its absence says it is gone.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  // `pid (comm) state ...`: the name may hold spaces and parentheses, the state follows the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
