/**
 * How many cores this process may use: the CPU affinity mask (taskset, a container's cpuset) and
 * the cgroup's CPU quota (docker --cpus, Kubernetes limits), whichever is smaller. A thread pool
 * sized from the machine's core count alone oversubscribes a process that is given fewer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';

export interface AvailableCores {
  count: number;
  /** Where the count comes from, for start lines and `agentic doctor`. */
  why: string;
}

function readText(path: string): string | null {
  try {
    return existsSync(path) ? readFileSync(path, 'utf8').trim() : null;
  } catch {
    return null;
  }
}

/** The cgroup's CPU quota in CPUs (cgroup v2 cpu.max, or v1 cfs_quota_us / cfs_period_us), or null without one. */
export function cgroupCpuQuota(root = '/sys/fs/cgroup', self = readText('/proc/self/cgroup') ?? ''): number | null {
  for (const line of self.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    // a container sees its own cgroup at the root of the mount, and /proc/self/cgroup may name the host's path
    const folders = (sub: string) => [join(root, sub, path), join(root, sub)];
    if (controllers === '') {
      for (const dir of folders('')) {
        const max = readText(join(dir, 'cpu.max'));
        if (max === null) continue;
        const [quota, period] = max.split(/\s+/);
        return quota === 'max' || !period ? null : Number(quota) / Number(period);
      }
    } else if (controllers?.split(',').includes('cpu')) {
      for (const dir of [...folders(controllers), ...folders('cpu')]) {
        const quota = readText(join(dir, 'cpu.cfs_quota_us'));
        const period = readText(join(dir, 'cpu.cfs_period_us'));
        if (quota === null || period === null) continue;
        return Number(quota) <= 0 ? null : Number(quota) / Number(period);
      }
    }
  }
  return null;
}

export function availableCores(): AvailableCores {
  const affinity = availableParallelism();
  const read = cgroupCpuQuota();
  // a file this process cannot make sense of sets no quota
  const quota = read !== null && Number.isFinite(read) && read > 0 ? read : null;
  const why = `${affinity} in the CPU affinity mask${quota === null ? ', no cgroup CPU quota' : `, a cgroup CPU quota of ${+quota.toFixed(2)}`}`;
  return { count: Math.max(1, Math.min(affinity, quota === null ? affinity : Math.ceil(quota))), why };
}
