// Member emails in AWS: the SES configuration set whose bounce and complaint events go to the default
// EventBridge bus, a rule that forwards those events (only those of member emails, recognised by their
// `member_id` tag) to the email-events queue, and the one permission to send: ses:SendEmail on the
// configured identity and configuration set, for the member-emails worker only.
// Events the rule cannot deliver to the queue (after a day of retries) land in a DLQ of their own, with an
// alarm: they are SES events, so an operator moves them into the email-events queue once it takes them again.
import { Duration, Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { EventBus, Match, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { ConfigurationSet, EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { deadLetterAlarm } from './alarms';
import { DLQ_RETENTION, type QueueWorker } from './queue-worker';

export interface MemberEmailProps {
  /** The verified SES identity member emails are sent from: a domain (`mail.example.com`) or an address. */
  identity: string;
  /** The member-emails queue worker (the sender). */
  sender: QueueWorker;
  /** The email-events queue worker (bounces and complaints). */
  events: QueueWorker;
  /** The topic the rule's DLQ alarm notifies. */
  alarmTopic: ITopic;
}

/**
 * EventBridge's own limits, the longest it keeps trying: a bounce or a complaint suppresses the member's
 * emails, so it is worth a day of retries before it goes to the DLQ (kept 14 days).
 */
export const EMAIL_EVENTS_TARGET_RETRY = { retryAttempts: 185, maxEventAge: Duration.hours(24) };

export class MemberEmail extends Construct {
  readonly configurationSet: ConfigurationSet;
  readonly rule: Rule;
  /** SES events the rule could not deliver to the email-events queue. */
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, props: MemberEmailProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {});
    this.configurationSet.addEventDestination('BouncesAndComplaints', {
      // SES can publish only to the default bus.
      destination: EventDestination.eventBus(EventBus.fromEventBusName(this, 'DefaultBus', 'default')),
      events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
    });
    this.deadLetterQueue = new Queue(this, 'RuleDeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.deadLetterAlarm = deadLetterAlarm(
      this,
      'RuleDeadLetterAlarm',
      this.deadLetterQueue,
      "SES bounce and complaint events could not reach the email-events queue: they are in the email-events rule's DLQ",
      props.alarmTopic,
    );
    this.rule = new Rule(this, 'EmailEventsRule', {
      description: 'SES bounces and complaints of member emails -> the email-events queue',
      eventPattern: {
        source: ['aws.ses'],
        detailType: ['Email Bounced', 'Email Complaint Received'],
        detail: { mail: { tags: { member_id: Match.exists() } } },
      },
      targets: [new SqsQueue(props.events.queue, { deadLetterQueue: this.deadLetterQueue, ...EMAIL_EVENTS_TARGET_RETRY })],
    });

    const fn = props.sender.fn;
    fn.addToRolePolicy(
      new PolicyStatement({
        sid: 'SendMemberEmails',
        actions: ['ses:SendEmail'],
        resources: [
          stack.formatArn({ service: 'ses', resource: 'identity', resourceName: props.identity }),
          stack.formatArn({ service: 'ses', resource: 'configuration-set', resourceName: this.configurationSet.configurationSetName }),
        ],
      }),
    );
    fn.addEnvironment('SES_CONFIGURATION_SET', this.configurationSet.configurationSetName);
    fn.addEnvironment('EMAIL_DEFAULT_FROM', props.identity.includes('@') ? props.identity : `no-reply@${props.identity}`);
  }
}
