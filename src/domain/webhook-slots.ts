import type { WebhookFairness } from '../store/types.js';

const MAX_IN_FLIGHT = 32;
/** A target's window (how many of its deliveries may be in flight) to start with, and again after it stopped answering. */
export const TARGET_SLOTS = 8;
/**
 * The widest a target's window grows while it answers fast: one fast target may then use most of the slots, within
 * its project's share (projectShare below), which keeps room for other projects.
 */
export const TARGET_SLOTS_MAX = MAX_IN_FLIGHT;
const TARGET_BACKOFF_MAX_MS = 60_000;
const CLAIM_SCAN = 500;
const FORGET_AFTER_MS = 3_600_000;
/** A widened window is kept this long after the target's last delivery, then it starts at TARGET_SLOTS again. */
const WINDOW_KEPT_MS = 60_000;

interface Target { inFlight: number; failures: number; blockedUntil: number; window: number; lastDoneAt: number }

/** How a delivery ended, for its target's window: no answer, an answer, or a 2xx answer in little of the timeout. */
export type Answer = 'none' | 'answered' | 'fast';

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
 * A target's window starts at TARGET_SLOTS and grows by one with each fast answer (a 2xx well within the timeout),
 * up to TARGET_SLOTS_MAX; an answer that is not fast halves it (not below TARGET_SLOTS), no answer puts it back to
 * TARGET_SLOTS (and to one in flight while it fails). In memory: a restart forgets the backoffs and the windows.
 */
export class DeliverySlots {
  private readonly targets = new Map<string, Target>();
  private readonly projects = new Map<string, number>();
  private inFlight = 0;

  constructor(private readonly backoffBaseMs: number) {}

  free(): number {
    return MAX_IN_FLIGHT - this.inFlight;
  }

  busy(): boolean {
    return this.inFlight > 0;
  }

  /**
   * What a claim may take: `perTarget` of a target with nothing in flight, else the room left in its window (so a
   * claim does not lease deliveries that take() would give back); the same for projects and their share.
   */
  fairness(now: number): WebhookFairness {
    const skipTargets: string[] = [];
    const targetRooms: Record<string, number> = {};
    for (const [key, t] of this.targets) {
      if (t.inFlight === 0 && t.blockedUntil + FORGET_AFTER_MS < now && t.lastDoneAt + WINDOW_KEPT_MS < now) this.targets.delete(key);
      else if (!this.open(t, now)) skipTargets.push(key);
      else targetRooms[key] = this.room(t);
    }
    const share = projectShare(this.projects.size);
    const skipProjects: string[] = [];
    const projectRooms: Record<string, number> = {};
    for (const [key, n] of this.projects) {
      if (n >= share) skipProjects.push(key);
      else projectRooms[key] = share - n;
    }
    return { perTarget: TARGET_SLOTS, perProject: share, scan: CLAIM_SCAN, skipTargets, skipProjects, targetRooms, projectRooms };
  }

  share(dueProjects: Iterable<string>): number {
    return projectShare(new Set([...this.projects.keys(), ...dueProjects]).size);
  }

  take(target: string, project: string, share: number, now: number): boolean {
    const t = this.targets.get(target) ?? { inFlight: 0, failures: 0, blockedUntil: 0, window: TARGET_SLOTS, lastDoneAt: 0 };
    if (this.inFlight >= MAX_IN_FLIGHT || !this.open(t, now) || (this.projects.get(project) ?? 0) >= share) return false;
    t.inFlight += 1;
    this.targets.set(target, t);
    this.projects.set(project, (this.projects.get(project) ?? 0) + 1);
    this.inFlight += 1;
    return true;
  }

  done(target: string, project: string, answer: Answer, now: number): void {
    this.inFlight -= 1;
    const left = (this.projects.get(project) ?? 1) - 1;
    if (left > 0) this.projects.set(project, left);
    else this.projects.delete(project);
    const t = this.targets.get(target);
    if (t === undefined) return;
    t.inFlight -= 1;
    t.lastDoneAt = now;
    if (answer !== 'none') {
      t.failures = 0;
      t.blockedUntil = 0;
      t.window = answer === 'fast' ? Math.min(TARGET_SLOTS_MAX, t.window + 1) : Math.max(TARGET_SLOTS, Math.floor(t.window / 2));
    } else {
      t.window = TARGET_SLOTS;
      if (now >= t.blockedUntil) {
        // Deliveries in flight together fail together: one backoff step, not one each.
        t.failures += 1;
        t.blockedUntil = now + Math.min(this.backoffBaseMs * 2 ** (t.failures - 1), TARGET_BACKOFF_MAX_MS);
      }
    }
    if (t.inFlight === 0 && t.failures === 0 && t.window === TARGET_SLOTS) this.targets.delete(target);
  }

  /** How many more of the target's deliveries may start now (its window, or one while it fails). */
  private room(t: Target): number {
    return (t.failures > 0 ? 1 : t.window) - t.inFlight;
  }

  private open(t: Target, now: number): boolean {
    return now >= t.blockedUntil && this.room(t) > 0;
  }
}
