import { Problem } from './problem.js';
import { Query, QueryConfiguration, Scenario, ScenarioPatch, ScenarioRecord, ScenarioRevision, ScenarioType, SmartContractDeployment, Transaction } from './scenario.js';
import { Credential, CredentialSchema, CredentialStatus } from './credential.js';
import { traceSchemas } from './trace.js';
import { ShadowRun } from './shadow.js';
import { DryRunAnswer, DryRunRequest, ScenarioReference } from './dry-run.js';
import { AddressInput, ExecuteRequest, Execution, ExecutionResult, QueryEcho, RuleResult, RuleStatus, Verdict, WebhookDeliveryView } from './execution.js';

/** Named components in openapi.yaml. Order matters for refs only at use. */
export const sharedSchemas = [
  Problem,
  ScenarioType, Query, QueryConfiguration, Transaction, SmartContractDeployment, Scenario, ScenarioPatch, ScenarioRecord, ScenarioRevision,
  CredentialStatus, CredentialSchema, Credential,
  AddressInput, ExecuteRequest, RuleStatus, Verdict, QueryEcho, RuleResult, ExecutionResult, WebhookDeliveryView, Execution,
  ...traceSchemas, ScenarioReference, DryRunRequest, DryRunAnswer, ShadowRun,
];
