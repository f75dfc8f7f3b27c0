// The workers' nested stack of RefloopApi: one queue + DLQ + worker per queue consumer of functions/workers.ts,
// one schedule per job (and the DLQ of their EventBridge targets), and the SES events (./member-email.ts).
// Every DLQ alarm notifies RefloopApi's alarm topic (a parameter of this stack). The routes' stacks send to
// these queues: CDK passes each URL and ARN they use out of this stack and into theirs.
import { Duration, NestedStack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { scheduledJobs, workers } from '../../functions/workers';
import type { QueueName } from '../../shared/queue/queues';
import { deadLetterAlarm } from './alarms';
import { RefloopFunction } from './function';
import { MemberEmail } from './member-email';
import { DLQ_RETENTION, QueueWorker } from './queue-worker';

/**
 * The retry policy of a schedule's target: a run that EventBridge could not hand to Lambda (throttled, the
 * function being replaced) is retried until the next run is due, then goes to the DLQ; there is no point
 * in a late copy, the next run does the same work. (EventBridge invokes jobs asynchronously: a job that
 * fails once invoked is Lambda's Errors metric, not this DLQ.)
 */
export function scheduleTargetRetry(everyMinutes: number): { retryAttempts: number; maxEventAge: Duration } {
  const minutes = Math.min(Math.max(everyMinutes, 1), 24 * 60);
  return { retryAttempts: 3, maxEventAge: Duration.minutes(minutes) };
}

export interface WorkersStackProps {
  table: ITable;
  /** The topic every DLQ alarm notifies (RefloopApi's). */
  alarmTopic: ITopic;
  /** Concurrency reserved for each queue worker (0: none). */
  workerReservedConcurrency: number;
  /** The verified SES identity member emails are sent from. */
  emailIdentity: string;
}

export class WorkersStack extends NestedStack {
  /** The worker and job functions by name. */
  readonly functions = new Map<string, RefloopFunction>();
  /** The queue + DLQ + worker of each queue, by queue name. */
  readonly queueWorkers = new Map<QueueName, QueueWorker>();
  /** The EventBridge rule of each scheduled job, by job name. */
  readonly schedules = new Map<string, Rule>();
  /** Schedule events EventBridge could not hand to their job (./alarms.ts alarms on it). */
  readonly scheduleDeadLetterQueue: Queue;
  /** The SES events rule and its DLQ. */
  readonly memberEmail: MemberEmail;
  /** Every DLQ alarm: one per queue worker, one per EventBridge DLQ. */
  readonly deadLetterAlarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, { description: 'Refloop workers: queues, queue workers, scheduled jobs, SES events' });
    const register = (name: string, fn: RefloopFunction) => {
      if (this.functions.has(name)) throw new Error(`Two functions are named ${name}`);
      this.functions.set(name, fn);
    };

    // Workers write their effects and idempotency markers in one transaction: read-write.
    for (const worker of workers) {
      if (this.queueWorkers.has(worker.queue)) throw new Error(`Queue ${worker.queue} has two consumers`);
      const queueWorker = new QueueWorker(this, worker.name, {
        worker,
        table: props.table,
        tableAccess: 'write',
        reservedConcurrency: props.workerReservedConcurrency,
        alarmTopic: props.alarmTopic,
      });
      this.deadLetterAlarms.push(queueWorker.alarm);
      this.queueWorkers.set(worker.queue, queueWorker);
      register(worker.name, queueWorker.fn);
    }

    // Scheduled jobs read (the provider-accounts registry) and enqueue; they write nothing themselves.
    // Schedule events that never reached their job go to one DLQ (nothing to replay there: it says a run was
    // missed, and why, in the message's attributes).
    this.scheduleDeadLetterQueue = new Queue(this, 'ScheduleDeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.deadLetterAlarms.push(
      deadLetterAlarm(this, 'ScheduleDeadLetterAlarm', this.scheduleDeadLetterQueue, 'A scheduled job was not invoked: its schedule event is in the schedules\' DLQ', props.alarmTopic),
    );
    for (const job of scheduledJobs) {
      const fn = new RefloopFunction(this, job.name, {
        entry: job.entry,
        description: `Scheduled job ${job.name}: every ${job.everyMinutes} min`,
        timeout: Duration.seconds(job.timeoutSeconds),
      }).bindTable(props.table, 'read');
      register(job.name, fn);
      this.schedules.set(
        job.name,
        new Rule(this, `${job.name}Schedule`, {
          description: `Runs ${job.name} every ${job.everyMinutes} minutes`,
          schedule: Schedule.rate(Duration.minutes(job.everyMinutes)),
          targets: [new LambdaFunction(fn, { deadLetterQueue: this.scheduleDeadLetterQueue, ...scheduleTargetRetry(job.everyMinutes) })],
        }),
      );
    }

    const emailSender = this.queueWorkers.get('member-emails');
    const emailEvents = this.queueWorkers.get('email-events');
    if (!emailSender || !emailEvents) throw new Error('functions/workers.ts must consume member-emails and email-events');
    this.memberEmail = new MemberEmail(this, 'MemberEmail', { identity: props.emailIdentity, sender: emailSender, events: emailEvents, alarmTopic: props.alarmTopic });
    this.deadLetterAlarms.push(this.memberEmail.deadLetterAlarm);
  }
}
