// cdk-nag's AWS Solutions checks over the app's real stacks (infra/cloud/stacks.ts: stateful, API with the
// dashboard site, monitoring), run the way `cdk synth` runs them (a validation plugin of the app, app.ts):
// no finding may be left, error or warning, unless infra/cloud/nag.ts acknowledges it with its reason.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { createStacks, type RefloopStacks } from '../../infra/cloud/stacks';

const dashboardDir = join(__dirname, '..', '..', 'web', 'dist');

interface Report {
  pluginReports: {
    pluginName: string;
    conclusion: string;
    violations: { ruleName: string; severity: string; violatingConstructs: { constructPath: string }[] }[];
  }[];
}

/**
 * Synthesizes the app with the AWS Solutions pack and returns the validation report (a plugin without findings
 * has no entry in it; synth throws with the report on any finding), and the pack's own report of the same
 * synthesized tree (proof that it ran, and over what: it names every resource it checked only when failing).
 */
function nagReport(
  env?: { account: string; region: string },
  extra?: (stacks: RefloopStacks) => void,
): { report: Report; pack: { success: boolean; violations: unknown[] } } {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = createStacks(app, { dashboardDir, alarmEmail: 'oncall@example.com', ...(env ? { env } : {}) });
  extra?.(stacks);
  const pack = new AwsSolutionsChecks(app);
  Validations.of(app).addPlugins(pack);
  const assembly = app.synth();
  return {
    report: JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as Report,
    pack: pack.validateScope(app),
  };
}

const findings = (report: Report) =>
  report.pluginReports
    .filter((p) => p.pluginName === 'AwsSolutions')
    .flatMap((p) =>
      p.violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingConstructs.map((c) => c.constructPath).join(', ')}`),
    );

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in the environment-agnostic app (`cdk synth` without an account)', () => {
    const { report, pack } = nagReport();
    expect(findings(report)).toEqual([]);
    expect(pack).toEqual({ success: true, violations: [] });
  });

  it('finds nothing unacknowledged with an account and region (the CLI sets them), where some findings name them', () => {
    const { report, pack } = nagReport({ account: '123456789012', region: 'eu-west-1' });
    expect(findings(report)).toEqual([]);
    expect(pack).toEqual({ success: true, violations: [] });
  });

  it('fails the synth on a finding nobody acknowledged (the check is live)', () => {
    const plain = (stacks: RefloopStacks) => new Queue(stacks.monitoring, 'PlainQueue', { encryption: QueueEncryption.UNENCRYPTED });
    let message = '';
    try {
      nagReport(undefined, plain);
    } catch (err) {
      message = String(err);
    }
    expect(message).toContain('RefloopMonitoring/PlainQueue/Resource');
    expect(message).toContain('AwsSolutions-SQS4');
  });

  it('acknowledges only the deliberate findings, each on its construct with a specific reason', () => {
    const { acknowledged } = createStacks(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), { dashboardDir });
    const rules = [...new Set(acknowledged.map((a) => a.id.replace(/\[.*$/, '')))].sort();
    expect(rules).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-CFR1',
      'AwsSolutions-CFR2',
      'AwsSolutions-CFR4',
      'AwsSolutions-IAM4',
      'AwsSolutions-IAM5',
      'AwsSolutions-L1',
      'AwsSolutions-S1',
      'AwsSolutions-SMG4',
      'AwsSolutions-SQS3',
    ]);
    // IAM4 only for the basic execution role; IAM5 only for X-Ray's "*", the table's indexes and CDK's deployment handler.
    for (const a of acknowledged.filter((x) => x.id.startsWith('AwsSolutions-IAM4')))
      expect(a.id).toBe('AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]');
    for (const a of acknowledged.filter((x) => x.id.startsWith('AwsSolutions-IAM5') && !x.path.includes('Custom::CDKBucketDeployment'))) {
      expect(a.id).toMatch(/^AwsSolutions-IAM5\[Resource::(\*|RefloopStateful:ExportsOutputFnGetAttTable\w+\/index\/\*)\]$/);
    }
    // Nothing acknowledged for a whole stack, and nothing in the stateful or monitoring stacks.
    for (const a of acknowledged) expect(a.path).toMatch(/^RefloopApi\/./);
    for (const a of acknowledged) expect({ id: a.id, reason: a.reason.length > 80 }).toEqual({ id: a.id, reason: true });
  });
});
