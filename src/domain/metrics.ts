import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExecutionResult } from '../schemas/execution.js';
import type { StoreObserver } from '../store/observer.js';
import type { VerifierStats } from '../trust/types.js';

/** Prometheus metrics. Labels never carry ids, addresses, tokens or anything from a credential. */
export class Metrics implements StoreObserver {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total', help: 'HTTP requests by route pattern, method and status', labelNames: ['method', 'route', 'status'], registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds', help: 'HTTP request latency by route pattern, method and status',
    labelNames: ['method', 'route', 'status'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly verdicts = new Counter({
    name: 'compliance_rule_verdicts_total', help: 'Rule results of execute calls by scenario type and status',
    labelNames: ['scenario_type', 'status'], registers: [this.registry],
  });

  private readonly shadows = new Counter({
    name: 'compliance_shadow_evaluations_total',
    help: 'Shadow evaluations of a proposed revision beside a live execute, by outcome: compared (same verdict), flipped, ' +
      'undecided (the revision\'s verdict could not be decided), skipped (queue full or closing), error',
    labelNames: ['outcome'], registers: [this.registry],
  });

  private readonly storeLatency = new Histogram({
    name: 'store_operation_duration_seconds', help: 'Database operation latency by operation and outcome',
    labelNames: ['operation', 'outcome'], buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2],
    registers: [this.registry],
  });

  readonly exposition: () => Promise<string>;
  readonly gathersWorkers: boolean;

  constructor(gather?: (registry: Registry) => () => Promise<string>) {
    collectDefaultMetrics({ register: this.registry });
    this.gathersWorkers = gather !== undefined;
    this.exposition = gather ? gather(this.registry) : () => this.registry.metrics();
  }

  watchVerifier(stats: () => VerifierStats): void {
    let counted = 0;
    // eslint-disable-next-line no-new -- a collector: the registry keeps it and calls collect() at each scrape
    new Counter({
      name: 'credential_cold_checks_total',
      help: 'First checks of credentials (signature, issuer key, merklization) started in the verification threads',
      registers: [this.registry],
      collect() {
        const now = stats().coldChecks;
        this.inc(now - counted);
        counted = now;
      },
    });
    // eslint-disable-next-line no-new -- a collector: the registry keeps it and calls collect() at each scrape
    new Gauge({
      name: 'credential_cold_queue',
      help: 'Credentials admitted for a first check and not finished (COLD_QUEUE_MAX bounds it)',
      registers: [this.registry],
      collect() {
        this.set(stats().coldReserved);
      },
    });
  }

  /** The chain follower's (src/services/deployment-follower.ts). */
  watchFollower(stats: () => { pending: number; rounds: number }): void {
    let counted = 0;
    // eslint-disable-next-line no-new -- a collector, as above
    new Gauge({
      name: 'chain_follow_pending_transactions', help: 'TxPosted deployment transactions the chain follower follows (0 where it holds no lease)',
      registers: [this.registry],
      collect() {
        this.set(stats().pending);
      },
    });
    // eslint-disable-next-line no-new -- a collector, as above
    new Counter({
      name: 'chain_follow_rpc_rounds_total', help: 'JSON-RPC batches the chain follower sent (one per chain and poll)', registers: [this.registry],
      collect() {
        const now = stats().rounds;
        this.inc(now - counted);
        counted = now;
      },
    });
  }

  countVerdicts(results: readonly ExecutionResult[]): void {
    for (const r of results) this.verdicts.inc({ scenario_type: r.objectType, status: r.result.status });
  }

  countShadow(outcome: 'compared' | 'flipped' | 'undecided' | 'skipped' | 'error'): void {
    this.shadows.inc({ outcome });
  }

  startOperation(operation: string): (outcome: 'ok' | 'error') => void {
    const end = this.storeLatency.startTimer({ operation });
    return (outcome) => { end({ outcome }); };
  }

  observeRequest(labels: { method: string; route: string; status: string }, seconds: number): void {
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }
}
