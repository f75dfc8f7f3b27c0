// What every alarm of the app shares: the SNS topic it notifies (alarm and back to OK), and the runbook
// section its description names, so whoever is paged opens the right page of docs/operations.md.
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import { type Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** The runbook's alarm sections (docs/operations.md `<a id="...">` anchors): one per kind of alarm. */
export const RUNBOOK_ANCHORS = [
  'alarm-dlq',
  'alarm-api-5xx',
  'alarm-api-latency',
  'alarm-lambda-throttles',
  'alarm-lambda-errors',
  'alarm-provider-errors',
  'alarm-webhook-lag',
  'alarm-secret-decryption',
] as const;
export type RunbookAnchor = (typeof RUNBOOK_ANCHORS)[number];

/** `<what the alarm means>. Runbook: docs/operations.md#<anchor>` */
export function alarmDescription(what: string, anchor: RunbookAnchor): string {
  return `${what}. Runbook: docs/operations.md#${anchor}`;
}

/**
 * The topic every alarm notifies, with an email subscription when one is given (CDK context `alarmEmail`;
 * AWS sends a confirmation link first). Other subscribers (a pager, chat) subscribe to the topic's ARN.
 * - Publishing must be over TLS (enforceSSL).
 * - The topic policy CDK writes for enforceSSL replaces SNS's default one, which is what let CloudWatch
 *   publish; CloudWatch alarms of this account are allowed explicitly.
 * - Not encrypted at rest: CloudWatch cannot publish to a topic under the AWS-managed aws/sns key (a key of
 *   our own would need a key policy for CloudWatch), and a message holds an alarm's name, state and metric
 *   value, no customer data.
 */
export function createAlarmTopic(scope: Construct, id: string, email?: string): Topic {
  const topic = new Topic(scope, id, { displayName: 'Refloop alarms', enforceSSL: true });
  const stack = Stack.of(scope);
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'CloudWatchAlarmsPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        StringEquals: { 'aws:SourceAccount': stack.account },
        ArnLike: {
          'aws:SourceArn': stack.formatArn({
            service: 'cloudwatch',
            resource: 'alarm',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      },
    }),
  );
  if (email !== undefined) {
    if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new Error(`context alarmEmail must be an email address, got ${email}`);
    topic.addSubscription(new EmailSubscription(email));
  }
  return topic;
}

/** Notifies the topic when the alarm fires and when it is back to OK (so whoever was paged knows it is over). */
export function notify(alarm: Alarm, topic: ITopic): Alarm {
  const action = new SnsAction(topic);
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}

/**
 * In alarm as soon as one message is in the DLQ (nothing is dropped silently). SQS stops publishing the
 * metrics of a queue idle for six hours: no data means an empty DLQ, so missing data is not breaching.
 */
export function deadLetterAlarm(scope: Construct, id: string, dlq: IQueue, what: string, topic: ITopic): Alarm {
  const alarm = dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }).createAlarm(scope, id, {
    alarmDescription: alarmDescription(what, 'alarm-dlq'),
    threshold: 1,
    evaluationPeriods: 1,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return notify(alarm, topic);
}
