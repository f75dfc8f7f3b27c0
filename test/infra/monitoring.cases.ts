// CDK assertions on the monitoring of the app as `cdk deploy` builds it (infra/cloud/stacks.ts): the alarm
// topic and its subscription, every alarm's action, threshold and runbook section, the CloudWatch dashboard,
// the metric contract the application emits (shared/metrics.ts), and each stack's size. Bundling is skipped.
import { deployedStacks } from './app-fixture';
import { type CfnElement, Names, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { workers } from '../../functions/workers';
import { PROVIDER_KINDS } from '../../shared/billing/registry';
import { RUNBOOK_ANCHORS } from '../../infra/cloud/alarms';
import { BUSINESS_METRICS, REWARD_TYPES } from '../../infra/cloud/monitoring';
import type { RefloopStacks } from '../../infra/cloud/stacks';
import { flatTemplate } from './templates';

type Resource = { Type: string; Properties: Record<string, any> };
type Alarm = Resource['Properties'];

let stacks: RefloopStacks;
let api: Template;
/** RefloopApi with its nested stacks (the workers' DLQ alarms are in theirs) as one template (./templates.ts). */
let apiFlat: Template;
let monitoring: Template;
let stateful: Template;

beforeAll(() => {
  // As `cdk deploy` builds it (./app-fixture.ts).
  stacks = deployedStacks();
  api = Template.fromStack(stacks.api);
  apiFlat = flatTemplate(stacks.api);
  monitoring = Template.fromStack(stacks.monitoring);
  stateful = Template.fromStack(stacks.stateful);
});

const alarmsOf = (template: Template) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((r) => (r as Resource).Properties);
const allAlarms = () => [...alarmsOf(apiFlat), ...alarmsOf(monitoring)];
const anchorOf = (alarm: Alarm) => /\. Runbook: docs\/operations\.md#([a-z0-9-]+)$/.exec(alarm.AlarmDescription as string)?.[1];
const byAnchor = (anchor: string) => alarmsOf(monitoring).filter((a) => anchorOf(a) === anchor);
/** The metric math query (ReturnData) and the metrics it reads, by id. */
const queries = (alarm: Alarm) => Object.fromEntries((alarm.Metrics as { Id: string }[]).map((m) => [m.Id, m])) as Record<string, any>;
const topicLogicalId = () => stacks.api.getLogicalId(stacks.api.alarmTopic.node.defaultChild as CfnElement);

describe('the stacks', () => {
  it('are the stateful stack (table, secrets key), the API stack and the monitoring stack, each well under 500 resources', () => {
    const count = (t: Template) => Object.keys(t.toJSON().Resources).length;
    expect(stacks.stateful.stackName).toBe('RefloopStateful');
    expect(stacks.api.stackName).toBe('RefloopApi');
    expect(stacks.monitoring.stackName).toBe('RefloopMonitoring');
    expect(
      Object.values(stateful.toJSON().Resources)
        .map((r) => (r as Resource).Type)
        .sort(),
    ).toEqual(['AWS::DynamoDB::GlobalTable', 'AWS::KMS::Key']);
    // The API stack's limit is the one its own test sets (test/infra/stack.cases.ts): room for the next routes.
    expect(count(api)).toBeLessThan(490);
    expect(count(monitoring)).toBeLessThan(50);
    // CloudFormation allows 200 outputs a stack; the cross-stack exports the monitoring stack imports are outputs too.
    expect(Object.keys(api.toJSON().Outputs).length).toBeLessThan(150);
    if (process.env.TEST_REPORTS === '1')
      console.log(`resources: RefloopStateful ${count(stateful)}, RefloopApi ${count(api)}, RefloopMonitoring ${count(monitoring)}`);
  });
});

describe('the alarm topic', () => {
  it('takes the alarmEmail subscription (CDK context, read by app.ts)', () => {
    api.resourceCountIs('AWS::SNS::Topic', 1);
    api.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: topicLogicalId() },
    });
  });

  it('is the action of every alarm of the app, when it fires and when it is back to OK', () => {
    const local = { Ref: topicLogicalId() };
    for (const alarm of alarmsOf(apiFlat))
      expect({ a: alarm.AlarmDescription, actions: alarm.AlarmActions, ok: alarm.OKActions }).toEqual({
        a: alarm.AlarmDescription,
        actions: [local],
        ok: [local],
      });
    const imported = { 'Fn::ImportValue': expect.stringContaining(`Ref${topicLogicalId()}`) };
    for (const alarm of alarmsOf(monitoring))
      expect({ a: alarm.AlarmDescription, actions: alarm.AlarmActions, ok: alarm.OKActions }).toEqual({
        a: alarm.AlarmDescription,
        actions: [imported],
        ok: [imported],
      });
  });
});

describe('alarms', () => {
  it('every alarm names its runbook section, and every section has an alarm; missing data is not breaching', () => {
    const anchors = allAlarms().map(anchorOf);
    expect(anchors).not.toContain(undefined);
    expect([...new Set(anchors)].sort()).toEqual([...RUNBOOK_ANCHORS].sort());
    for (const alarm of allAlarms())
      expect({ a: alarm.AlarmDescription, missing: alarm.TreatMissingData }).toEqual({
        a: alarm.AlarmDescription,
        missing: 'notBreaching',
      });
  });

  it('every DLQ: one alarm per worker DLQ and per EventBridge DLQ (alarm-dlq)', () => {
    const dlqs = alarmsOf(apiFlat).filter((a) => anchorOf(a) === 'alarm-dlq');
    expect(dlqs).toHaveLength(workers.length + 2);
    for (const a of dlqs)
      expect(a).toMatchObject({
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Statistic: 'Maximum',
        Period: 60,
      });
  });

  it('the API 5xx rate: 5xx / requests > 1% over 5 minutes, from 20 requests (alarm-api-5xx)', () => {
    const [alarm] = byAnchor('alarm-api-5xx');
    expect(byAnchor('alarm-api-5xx')).toHaveLength(1);
    expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
    const q = queries(alarm as Alarm);
    expect(q.expr_1).toMatchObject({ Expression: 'IF(requests >= 20, 100 * FILL(errors, 0) / requests, 0)', ReturnData: true });
    const apiId = [{ Name: 'ApiId', Value: { 'Fn::ImportValue': expect.stringContaining('HttpApi') } }];
    expect(q.requests.MetricStat).toEqual({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Count', Dimensions: apiId },
      Period: 300,
      Stat: 'Sum',
    });
    expect(q.errors.MetricStat).toEqual({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: '5xx', Dimensions: apiId },
      Period: 300,
      Stat: 'Sum',
    });
  });

  it('the API p99 latency: > 3 s for three 5-minute periods (alarm-api-latency)', () => {
    const alarms = byAnchor('alarm-api-latency');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({
      Threshold: 3000,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
    });
    expect(queries(alarms[0] as Alarm).m1.MetricStat).toMatchObject({
      Metric: { Namespace: 'AWS/ApiGateway', MetricName: 'Latency' },
      Period: 300,
      Stat: 'p99',
    });
  });

  it.each([
    ['alarm-lambda-throttles', 'Throttles', 0, 'GreaterThanThreshold'],
    ['alarm-lambda-errors', 'Errors', 5, 'GreaterThanOrEqualToThreshold'],
  ])('%s: AWS/Lambda %s of the account and region (no FunctionName), 5 minutes', (anchor, metric, threshold, operator) => {
    const alarms = byAnchor(anchor);
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Threshold: threshold, ComparisonOperator: operator, EvaluationPeriods: 1 });
    expect(queries(alarms[0] as Alarm).m1.MetricStat).toEqual({
      Metric: { Namespace: 'AWS/Lambda', MetricName: metric },
      Period: 300,
      Stat: 'Sum',
    });
  });

  it('each provider: ProviderErrors / ProviderCalls > 20% over 10 minutes, from 5 calls (alarm-provider-errors)', () => {
    const alarms = byAnchor('alarm-provider-errors');
    expect(alarms).toHaveLength(PROVIDER_KINDS.length);
    for (const provider of PROVIDER_KINDS) {
      const mine = alarms.filter((a) => JSON.stringify(a.Metrics).includes(`"Value":"${provider}"`));
      expect({ provider, n: mine.length }).toEqual({ provider, n: 1 });
      expect(mine[0]).toMatchObject({ Threshold: 20, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
      const q = queries(mine[0] as Alarm);
      const expression = Object.values(q).find((m) => m.Expression);
      expect(expression.Expression).toMatch(/^IF\(calls\w+ >= 5, 100 \* FILL\(errors\w+, 0\) \/ calls\w+, 0\)$/);
      const dims = [
        { Name: 'Provider', Value: provider },
        { Name: 'service', Value: 'refloop' },
      ];
      const stats = Object.values(q)
        .filter((m) => m.MetricStat)
        .map((m) => m.MetricStat);
      expect(stats).toEqual(
        expect.arrayContaining([
          { Metric: { Namespace: 'Refloop', MetricName: 'ProviderCalls', Dimensions: dims }, Period: 600, Stat: 'Sum' },
          { Metric: { Namespace: 'Refloop', MetricName: 'ProviderErrors', Dimensions: dims }, Period: 600, Stat: 'Sum' },
        ]),
      );
    }
  });

  // Issue 23 #34: a stored secret that does not decrypt answers 503 and pages the operator.
  it('a secret that does not decrypt: SecretDecryptionFailures > 0 in 5 minutes (alarm-secret-decryption)', () => {
    const alarms = byAnchor('alarm-secret-decryption');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', EvaluationPeriods: 1 });
    expect(queries(alarms[0] as Alarm).m1.MetricStat).toEqual({
      Metric: { Namespace: 'Refloop', MetricName: 'SecretDecryptionFailures', Dimensions: [{ Name: 'service', Value: 'refloop' }] },
      Period: 300,
      Stat: 'Sum',
    });
  });

  it('each provider: WebhookLag p95 > 5 minutes, two 5-minute periods (alarm-webhook-lag)', () => {
    const alarms = byAnchor('alarm-webhook-lag');
    expect(alarms).toHaveLength(PROVIDER_KINDS.length);
    for (const provider of PROVIDER_KINDS) {
      const mine = alarms.filter((a) => JSON.stringify(a.Metrics).includes(`"Value":"${provider}"`));
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({
        Threshold: 300_000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
        DatapointsToAlarm: 2,
      });
      expect(queries(mine[0] as Alarm).m1.MetricStat).toEqual({
        Metric: {
          Namespace: 'Refloop',
          MetricName: 'WebhookLag',
          Dimensions: [
            { Name: 'Provider', Value: provider },
            { Name: 'service', Value: 'refloop' },
          ],
        },
        Period: 300,
        Stat: 'p95',
      });
    }
  });
});

describe('the CloudWatch dashboard', () => {
  type Widget = { type: string; properties: { title?: string; metrics?: unknown[][]; alarms?: string[] } };
  let widgets: Widget[];

  /** The dashboard body with each CloudFormation reference written as `<Ref|GetAtt|Import:...>`, parsed. */
  beforeAll(() => {
    const [dashboard] = Object.values(monitoring.findResources('AWS::CloudWatch::Dashboard')) as Resource[];
    const parts = dashboard?.Properties.DashboardBody['Fn::Join'][1] as unknown[];
    const text = parts
      .map((p) => {
        if (typeof p === 'string') return p;
        const o = p as Record<string, any>;
        if (o.Ref) return `<Ref:${o.Ref}>`;
        if (o['Fn::GetAtt']) return `<GetAtt:${(o['Fn::GetAtt'] as string[]).join('.')}>`;
        if (o['Fn::ImportValue']) return `<Import:${o['Fn::ImportValue']}>`;
        throw new Error(`unexpected part ${JSON.stringify(p)}`);
      })
      .join('');
    widgets = (JSON.parse(text) as { widgets: Widget[] }).widgets;
  });

  const graphs = () => widgets.filter((w) => w.type === 'metric');
  /** [namespace, metric name, ...dimension pairs] of every plain metric of a widget. */
  const metricsOf = (w: Widget) => (w.properties.metrics ?? []).map((m) => m.filter((x) => typeof x === 'string') as string[]);
  const everyMetric = () => graphs().flatMap(metricsOf);
  const expressions = () =>
    graphs().flatMap(
      (w) => (w.properties.metrics ?? []).map((m) => (m[0] as { expression?: string }).expression).filter(Boolean) as string[],
    );

  it('shows the status of every alarm of the app', () => {
    const [status] = widgets.filter((w) => w.type === 'alarm');
    expect(status?.properties.alarms).toHaveLength(alarmsOf(apiFlat).length + alarmsOf(monitoring).length);
  });

  it('shows API requests, 4xx, 5xx, the 5xx rate and the p99 latency', () => {
    const apiMetrics = everyMetric()
      .filter((m) => m[0] === 'AWS/ApiGateway')
      .map((m) => m[1]);
    expect(apiMetrics).toEqual(expect.arrayContaining(['Count', '4xx', '5xx', 'Latency', 'IntegrationLatency']));
    expect(JSON.stringify(graphs().find((w) => w.properties.title === 'API latency (ms)'))).toContain('"stat":"p99"');
    expect(expressions()).toContain('IF(requests >= 20, 100 * FILL(errors, 0) / requests, 0)');
  });

  it('shows Lambda errors and throttles, and the functions with the most of them', () => {
    const lambda = everyMetric().filter((m) => m[0] === 'AWS/Lambda');
    expect(lambda).toEqual(
      expect.arrayContaining([
        ['AWS/Lambda', 'Errors'],
        ['AWS/Lambda', 'Throttles'],
      ]),
    );
    expect(expressions()).toEqual(
      expect.arrayContaining([expect.stringContaining('MetricName="Errors"'), expect.stringContaining('MetricName="Throttles"')]),
    );
  });

  it("shows every queue's depth beside its DLQ's, and the EventBridge DLQs", () => {
    // The queue's QueueName attribute, imported from RefloopApi, which takes it from the workers' nested stack
    // (an output named after the queue's construct path).
    const name = (queue: { node: { defaultChild?: unknown } }) => {
      const element = queue.node.defaultChild as CfnElement;
      return new RegExp(`FnGetAtt\\w*(${Stack.of(element).getLogicalId(element)}|${Names.nodeUniqueId(element.node)})QueueName`);
    };
    for (const [queueName, qw] of stacks.api.queueWorkers) {
      const widget = graphs().find((w) => w.properties.title === `Queue ${queueName}: depth and DLQ depth`);
      const metrics = widget ? metricsOf(widget) : [];
      expect({ queueName, metrics }).toEqual({
        queueName,
        metrics: [
          ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', expect.stringMatching(name(qw.queue))],
          ['AWS/SQS', 'ApproximateNumberOfMessagesVisible', 'QueueName', expect.stringMatching(name(qw.deadLetterQueue))],
        ],
      });
    }
    const sqs = JSON.stringify(everyMetric().filter((m) => m[0] === 'AWS/SQS'));
    expect(sqs).toMatch(name(stacks.api.scheduleDeadLetterQueue));
    expect(sqs).toMatch(name(stacks.api.memberEmail.deadLetterQueue));
  });

  it('shows every business metric of the contract, in namespace Refloop with service=refloop and its own dimensions', () => {
    const refloop = everyMetric().filter((m) => m[0] === 'Refloop');
    for (const m of refloop) expect(m.slice(2)).toEqual(expect.arrayContaining(['service', 'refloop']));
    const shown = new Set(refloop.map((m) => m[1]));
    // ProviderErrorsByCall's Call values are the application's: a SEARCH finds them all.
    const search = expressions().find((e) => e.includes('ProviderErrorsByCall'));
    expect(search).toBe(`SEARCH('{Refloop,Call,Provider,service} MetricName="ProviderErrorsByCall"', 'Sum', 300)`);
    for (const name of Object.keys(BUSINESS_METRICS))
      if (name !== 'ProviderErrorsByCall') expect({ name, shown: shown.has(name) }).toEqual({ name, shown: true });
    for (const type of REWARD_TYPES)
      expect(refloop).toContainEqual(['Refloop', 'RewardsCreated', 'RewardType', type, 'service', 'refloop']);
    for (const provider of PROVIDER_KINDS) {
      for (const metric of ['ProviderCalls', 'ProviderErrors', 'WebhookLag'])
        expect(refloop).toContainEqual(['Refloop', metric, 'Provider', provider, 'service', 'refloop']);
    }
  });

  it('outputs its console URL', () => {
    monitoring.hasOutput('CloudWatchDashboardUrl', {});
  });
});
