// Member emails in AWS: the SES configuration set whose bounce and complaint events go to the default
// EventBridge bus, a rule that forwards those events (only those of member emails, recognised by their
// `member_id` tag) to the email-events queue, and the one permission to send: ses:SendEmail on the
// configured identity and configuration set, for the member-emails worker only.
import { Stack } from 'aws-cdk-lib';
import { EventBus, Match, Rule } from 'aws-cdk-lib/aws-events';
import { SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { ConfigurationSet, EmailSendingEvent, EventDestination } from 'aws-cdk-lib/aws-ses';
import { Construct } from 'constructs';
import type { QueueWorker } from './queue-worker';

export interface MemberEmailProps {
  /** The verified SES identity member emails are sent from: a domain (`mail.example.com`) or an address. */
  identity: string;
  /** The member-emails queue worker (the sender). */
  sender: QueueWorker;
  /** The email-events queue worker (bounces and complaints). */
  events: QueueWorker;
}

export class MemberEmail extends Construct {
  readonly configurationSet: ConfigurationSet;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: MemberEmailProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {});
    this.configurationSet.addEventDestination('BouncesAndComplaints', {
      // SES can publish only to the default bus.
      destination: EventDestination.eventBus(EventBus.fromEventBusName(this, 'DefaultBus', 'default')),
      events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
    });
    this.rule = new Rule(this, 'EmailEventsRule', {
      description: 'SES bounces and complaints of member emails -> the email-events queue',
      eventPattern: {
        source: ['aws.ses'],
        detailType: ['Email Bounced', 'Email Complaint Received'],
        detail: { mail: { tags: { member_id: Match.exists() } } },
      },
      targets: [new SqsQueue(props.events.queue)],
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
