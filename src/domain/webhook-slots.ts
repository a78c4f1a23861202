import type { WebhookFairness } from '../store/types.js';

const MAX_IN_FLIGHT = 32;
export const TARGET_SLOTS = 8;
const TARGET_BACKOFF_MAX_MS = 60_000;
const CLAIM_SCAN = 500;
const FORGET_AFTER_MS = 3_600_000;

interface Target { inFlight: number; failures: number; blockedUntil: number }

/** One hanging host under many paths gets one backoff. The stores compute the same key in SQL. */
export function targetKey(url: string | null | undefined): string {
  if (url === null || url === undefined) return '';
  const slash = url.indexOf('/', 8);
  return url.slice(0, slash === -1 ? 7 : slash);
}

/** One part kept free for a project whose deliveries come due later. */
function projectShare(activeProjects: number): number {
  return Math.max(1, Math.floor(MAX_IN_FLIGHT / (activeProjects + 1)));
}

/**
 * A target that does not answer drops to one delivery at a time and backs off; any answer gives its slots back.
 * In memory: a restart forgets the backoffs.
 */
export class DeliverySlots {
  private readonly targets = new Map<string, Target>();
  private readonly projects = new Map<string, number>();
  private inFlight = 0;

  constructor(private readonly backoffBaseMs: number) {}

  free(): number {
    return MAX_IN_FLIGHT - this.inFlight;
  }

  fairness(now: number): WebhookFairness {
    const skipTargets: string[] = [];
    for (const [key, t] of this.targets) {
      if (t.inFlight === 0 && t.blockedUntil + FORGET_AFTER_MS < now) this.targets.delete(key);
      else if (!this.open(t, now)) skipTargets.push(key);
    }
    const share = projectShare(this.projects.size);
    const skipProjects = [...this.projects].filter(([, n]) => n >= share).map(([key]) => key);
    return { perTarget: TARGET_SLOTS, scan: CLAIM_SCAN, skipTargets, skipProjects };
  }

  share(dueProjects: Iterable<string>): number {
    return projectShare(new Set([...this.projects.keys(), ...dueProjects]).size);
  }

  take(target: string, project: string, share: number, now: number): boolean {
    const t = this.targets.get(target) ?? { inFlight: 0, failures: 0, blockedUntil: 0 };
    if (this.inFlight >= MAX_IN_FLIGHT || !this.open(t, now) || (this.projects.get(project) ?? 0) >= share) return false;
    t.inFlight += 1;
    this.targets.set(target, t);
    this.projects.set(project, (this.projects.get(project) ?? 0) + 1);
    this.inFlight += 1;
    return true;
  }

  done(target: string, project: string, answered: boolean, now: number): void {
    this.inFlight -= 1;
    const left = (this.projects.get(project) ?? 1) - 1;
    if (left > 0) this.projects.set(project, left);
    else this.projects.delete(project);
    const t = this.targets.get(target);
    if (t === undefined) return;
    t.inFlight -= 1;
    if (answered) {
      t.failures = 0;
      t.blockedUntil = 0;
    } else if (now >= t.blockedUntil) {
      // Deliveries in flight together fail together: one backoff step, not one each.
      t.failures += 1;
      t.blockedUntil = now + Math.min(this.backoffBaseMs * 2 ** (t.failures - 1), TARGET_BACKOFF_MAX_MS);
    }
    if (t.inFlight === 0 && t.failures === 0) this.targets.delete(target);
  }

  private open(t: Target, now: number): boolean {
    return now >= t.blockedUntil && t.inFlight < (t.failures > 0 ? 1 : TARGET_SLOTS);
  }
}
