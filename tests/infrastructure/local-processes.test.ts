import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { type LocalProcessFacts, localProcesses } from '../../infrastructure/leases/local-processes';
import { eventually } from '../support/stores';

describe('lease holders of this machine (local-processes)', () => {
  const facts = (overrides: Partial<LocalProcessFacts> = {}): LocalProcessFacts => ({
    hostname: 'web-1',
    pid: 100,
    scope: '0a1b2c3d',
    exists: (pid) => pid !== 4242,
    ...overrides,
  });

  it('names a holder hostname:pid:random:scope, new each time', () => {
    const processes = localProcesses(facts());
    const first = processes.holderId();
    expect(first).to.match(/^web-1:100:[0-9a-f]{8}:0a1b2c3d$/);
    expect(processes.holderId()).to.not.equal(first);
  });

  it('judges gone only a holder of this host and scope whose process does not exist, with or without a /part suffix', () => {
    const { isGone } = localProcesses(facts());
    expect(isGone('web-1:4242:deadbeef:0a1b2c3d')).to.equal(true);
    expect(isGone('web-1:4242:deadbeef:0a1b2c3d/projection-thread')).to.equal(true);
    // Alive, another machine, another boot or PID namespace, this very process, and ids of another form.
    expect(isGone('web-1:4243:deadbeef:0a1b2c3d')).to.equal(false);
    expect(isGone('web-2:4242:deadbeef:0a1b2c3d')).to.equal(false);
    expect(isGone('web-1:4242:deadbeef:ffffffff')).to.equal(false);
    expect(isGone('web-1:100:deadbeef:0a1b2c3d')).to.equal(false);
    expect(isGone('web-1:4242:deadbeef')).to.equal(false);
    expect(isGone('worker-blue')).to.equal(false);
  });

  it('judges nothing gone where the boot and PID namespace cannot be told', () => {
    const { isGone, holderId } = localProcesses(facts({ scope: null }));
    expect(holderId()).to.match(/:00000000$/);
    expect(isGone('web-1:4242:deadbeef:00000000')).to.equal(false);
  });

  it('on this machine (Linux): a process that ended is gone, this one and a running one are not', async () => {
    const processes = localProcesses();
    const mine = processes.holderId();
    // Off Linux nothing is judged gone (the test above); CI and deployments are Linux.
    const judges = !mine.endsWith(':00000000');
    expect(judges || process.platform !== 'linux', 'Linux tells the boot and PID namespace').to.equal(true);
    const scope = mine.split(':').pop();
    expect(mine.startsWith(`${os.hostname()}:${process.pid}:`)).to.equal(true);
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const holderOf = (pid: number) => `${os.hostname()}:${pid}:00c0ffee:${scope}`;
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      expect(processes.isGone(holderOf(child.pid!))).to.equal(false);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((resolve) => child.once('exit', resolve));
    expect(processes.isGone(holderOf(child.pid!))).to.equal(judges);
    expect(processes.isGone(holderOf(process.pid))).to.equal(false);
  });

  it('on this machine (Linux): a killed process its parent has not reaped yet (a zombie) is gone', async () => {
    const processes = localProcesses();
    const scope = processes.holderId().split(':').pop();
    // The shell starts a short sleep, prints its pid and becomes a long sleep, which never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (chunk) => resolve(String(chunk).trim()))));
      await eventually(() => !fs.existsSync(`/proc/${zombie}/stat`) || /\) Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')), 5000, 'the child a zombie');
      expect(fs.readFileSync(`/proc/${zombie}/stat`, 'utf8')).to.match(/\) Z /);
      expect(processes.isGone(`${os.hostname()}:${zombie}:00c0ffee:${scope}`)).to.equal(process.platform === 'linux');
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
