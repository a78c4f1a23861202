import type { WebhookFairness } from '../store/types.js';

/** Deliveries one instance sends at once, across every receiver. */
const MAX_IN_FLIGHT = 32;
/** At once to one target (the origin of a scenario's webhookUrl, or WEBHOOK_URL) while it answers. */
export const TARGET_SLOTS = 8;
/** The longest a target that does not answer is left alone before it is tried again. */
const TARGET_BACKOFF_MAX_MS = 60_000;
/** How many due deliveries a claim looks through for ones it may send (a backlog of one target is skipped past). */
const CLAIM_SCAN = 500;
/** A target that has not been tried for this long is forgotten (its backoff has long run out). */
const FORGET_AFTER_MS = 3_600_000;

interface Target { inFlight: number; failures: number; blockedUntil: number }

/**
 * The target a delivery counts against: the origin (scheme, host, port) of its URL, '' for WEBHOOK_URL. By origin, not
 * by URL: a tenant naming one hanging host under many paths gets one target's slots and one backoff. The stores'
 * claims compute the same key in SQL (the URL up to the first '/' after the scheme's '//'); URLs are stored as
 * WHATWG hrefs (executionDelivery), so that prefix is the origin, without credentials (refused at write).
 */
export function targetKey(url: string | null | undefined): string {
  if (url === null || url === undefined) return '';
  const slash = url.indexOf('/', 8);
  return url.slice(0, slash === -1 ? 7 : slash);
}

/**
 * A project's share of the slots: an equal part for each project with deliveries in flight or due, and one more part
 * kept free, so that however many tenants hang (up to 31), a project whose deliveries come due later finds a slot at
 * the next poll instead of waiting for a timeout.
 */
function projectShare(activeProjects: number): number {
  return Math.max(1, Math.floor(MAX_IN_FLIGHT / (activeProjects + 1)));
}

/**
 * Fair sending: each target (origin) and each project gets a bounded share of the instance's concurrent
 * deliveries (the claim takes projects in turn, see the stores' claimWebhooks), and a target that does not answer (timeout, no connection) drops to one delivery at a time and is left
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
    const share = projectShare(this.projects.size);
    const skipProjects = [...this.projects].filter(([, n]) => n >= share).map(([key]) => key);
    return { perTarget: TARGET_SLOTS, scan: CLAIM_SCAN, skipTargets, skipProjects };
  }

  /** A project's share now, given the projects of the deliveries a claim found due (and those in flight). */
  share(dueProjects: Iterable<string>): number {
    return projectShare(new Set([...this.projects.keys(), ...dueProjects]).size);
  }

  /**
   * Takes a slot for one delivery to `target` (targetKey) of `project` ('' for none), which may hold `share` slots;
   * false when none is free now.
   */
  take(target: string, project: string, share: number, now: number): boolean {
    const t = this.targets.get(target) ?? { inFlight: 0, failures: 0, blockedUntil: 0 };
    if (this.inFlight >= MAX_IN_FLIGHT || !this.open(t, now) || (this.projects.get(project) ?? 0) >= share) return false;
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
