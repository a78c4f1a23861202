/** Four eyes: a proposed revision goes live once someone other than its author approves it. */
import type { PlanCache } from '../domain/plan-cache.js';
import type { Scenario } from '../schemas/scenario.js';
import { ScenarioIdTaken } from '../store/errors.js';
import type { ScenarioApprovals, ScenarioRepository, ScenarioRevision, ScenarioRevisionRepository, ScenarioRow } from '../store/types.js';
import type { Access } from './access.js';
import { Conflict, NotProposed, ProposalStale, RevisionNotFound, SelfApproval } from './errors.js';
import { reviseWith, type RevisionSource } from './revision-drafts.js';
import { reaches } from './revisions.js';
import { findScenarioIn } from './scenarios.js';

export interface ApprovalServiceOptions {
  store: ScenarioRepository & ScenarioRevisionRepository & ScenarioApprovals;
  plans: PlanCache;
  now: () => number;
}

export class ApprovalService {
  constructor(private readonly options: ApprovalServiceOptions) {}

  /** The live scenario and its proposal `n`, as the caller may see them. */
  private async proposal(access: Access, id: string, n: number): Promise<{ live: ScenarioRow; proposal: ScenarioRevision }> {
    const live = await findScenarioIn(this.options.store, access, id);
    const proposal = await this.options.store.getRevision(live.seq, n);
    if (!proposal || proposal.scenarioId !== id || !reaches(access, proposal.projectId)) throw new RevisionNotFound(id, n);
    if (proposal.state !== 'proposed') throw new NotProposed(id, n, proposal.state);
    return { live, proposal };
  }

  /** `approver`: the caller's subject, never the author's. */
  async approve(access: Access, approver: string, id: string, n: number, source: RevisionSource): Promise<ScenarioRevision> {
    const { store, plans, now } = this.options;
    const { live, proposal } = await this.proposal(access, id, n);
    if (proposal.author === approver) throw new SelfApproval(id, n);
    const base = proposal.baseRevision ?? 0;
    if (base !== live.revision) throw new ProposalStale(id, n, base, live.revision);
    const { input }: { input: Scenario } = JSON.parse(proposal.content);
    let outcome;
    try {
      outcome = await store.approve({
        seq: live.seq, revision: n, base, input, decidedBy: approver, now: new Date(now()).toISOString(), revise: reviseWith(source),
      });
    } catch (err) {
      if (!(err instanceof ScenarioIdTaken)) throw err;
      throw new Conflict(`Project ${input.projectId ?? '(none)'} has a scenario with id ${id} already: the proposal cannot move it there`);
    }
    if (outcome === 'stale') throw new ProposalStale(id, n, base, (await findScenarioIn(store, access, id)).revision);
    // Decided by another meanwhile: said as it stands.
    if (outcome === 'decided') await this.proposal(access, id, n);
    plans.forget(id, live.seq);
    return this.decided(live.seq, id, n);
  }

  /** By a reviewer, or by the author withdrawing it. */
  async reject(access: Access, by: string, id: string, n: number): Promise<ScenarioRevision> {
    const { live } = await this.proposal(access, id, n);
    if (!(await this.options.store.reject(live.seq, n, by, new Date(this.options.now()).toISOString()))) await this.proposal(access, id, n);
    return this.decided(live.seq, id, n);
  }

  private async decided(seq: number, id: string, n: number): Promise<ScenarioRevision> {
    const revision = await this.options.store.getRevision(seq, n);
    if (!revision) throw new RevisionNotFound(id, n);
    return revision;
  }
}
