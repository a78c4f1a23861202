import type { WebhookFairness } from '../store/types.js';

/** Deliveries one instance sends at once, across every receiver. */
const MAX_IN_FLIGHT = 32;
/** At once to one target (a scenario's webhookUrl, or WEBHOOK_URL) while it answers. */
export const TARGET_SLOTS = 8;
/** At once for one project, over all its targets: a tenant with many receivers cannot take every slot. */
const PROJECT_SLOTS = 16;
/** The longest a target that does not answer is left alone before it is tried again. */
const TARGET_BACKOFF_MAX_MS = 60_000;
/** How many due deliveries a claim looks through for ones it may send (a backlog of one target is skipped past). */
const CLAIM_SCAN = 500;
/** A target that has not been tried for this long is forgotten (its backoff has long run out). */
const FORGET_AFTER_MS = 3_600_000;

interface Target { inFlight: number; failures: number; blockedUntil: number }

/**
 * Fair sending (issue 36): each target and each project gets a bounded share of the instance's concurrent
 * deliveries, and a target that does not answer (timeout, no connection) drops to one delivery at a time and is left
 * alone for a backoff that doubles while it keeps failing; an answer (any status) gives it its slots back. Others keep
 * their pace meanwhile. Per instance and in memory: a restart forgets the backoffs.
 */
export class DeliverySlots {
  private readonly targets = new Map<string, Target>();
  private readonly projects = new Map<string, number>();
  private inFlight = 0;

  constructor(private readonly backoffBaseMs: number) {}

  free(): number {
    return MAX_IN_FLIGHT - this.inFlight;
  }

  /** What a claim must leave alone now: the targets without a free slot or backing off, the projects at their share. */
  fairness(now: number): WebhookFairness {
    const skipTargets: string[] = [];
    for (const [key, t] of this.targets) {
      if (t.inFlight === 0 && t.blockedUntil + FORGET_AFTER_MS < now) this.targets.delete(key);
      else if (!this.open(t, now)) skipTargets.push(key);
    }
    const skipProjects = [...this.projects].filter(([, n]) => n >= PROJECT_SLOTS).map(([key]) => key);
    return { perTarget: TARGET_SLOTS, scan: CLAIM_SCAN, skipTargets, skipProjects };
  }

  /** Takes a slot for one delivery to `target` of `project` ('' for none); false when none is free now. */
  take(target: string, project: string, now: number): boolean {
    const t = this.targets.get(target) ?? { inFlight: 0, failures: 0, blockedUntil: 0 };
    if (this.inFlight >= MAX_IN_FLIGHT || !this.open(t, now) || (this.projects.get(project) ?? 0) >= PROJECT_SLOTS) return false;
    t.inFlight += 1;
    this.targets.set(target, t);
    this.projects.set(project, (this.projects.get(project) ?? 0) + 1);
    this.inFlight += 1;
    return true;
  }

  /** Gives the slot back; `answered`: the receiver answered (any status), otherwise it backs off. */
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
      // Deliveries that were in flight together fail together: one backoff step for them, not one each.
      t.failures += 1;
      t.blockedUntil = now + Math.min(this.backoffBaseMs * 2 ** (t.failures - 1), TARGET_BACKOFF_MAX_MS);
    }
    if (t.inFlight === 0 && t.failures === 0) this.targets.delete(target);
  }

  private open(t: Target, now: number): boolean {
    return now >= t.blockedUntil && t.inFlight < (t.failures > 0 ? 1 : TARGET_SLOTS);
  }
}
