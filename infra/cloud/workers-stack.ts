// The workers' nested stack of RefloopApi: the function of every queue consumer of functions/workers.ts (its
// queue, DLQ and DLQ alarm stay in RefloopApi, ./queue-worker.ts with `functionScope`), and every scheduled job
// with its EventBridge schedule (the schedules' DLQ stays in RefloopApi). Queues and DLQs hold messages, so they
// stay where they were: moving a queue to another template replaces it, and what it held would be lost.
import { Duration, NestedStack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { scheduledJobs } from '../../functions/workers';
import { RefloopFunction } from './function';

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
  /** Schedule events EventBridge could not hand to their job (RefloopApi's). */
  scheduleDeadLetterQueue: IQueue;
}

export class WorkersStack extends NestedStack {
  /** The scheduled jobs' functions by name (the queue workers' are their QueueWorker's `fn`). */
  readonly functions = new Map<string, RefloopFunction>();
  /** The EventBridge rule of each scheduled job, by job name. */
  readonly schedules = new Map<string, Rule>();

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, { description: "Refloop workers: the queue workers' and the scheduled jobs' functions, the schedules" });
    // Scheduled jobs read (the provider-accounts registry) and enqueue; they write nothing themselves.
    for (const job of scheduledJobs) {
      const fn = new RefloopFunction(this, job.name, {
        entry: job.entry,
        description: `Scheduled job ${job.name}: every ${job.everyMinutes} min`,
        timeout: Duration.seconds(job.timeoutSeconds),
      }).bindTable(props.table, 'read');
      this.functions.set(job.name, fn);
      this.schedules.set(
        job.name,
        new Rule(this, `${job.name}Schedule`, {
          description: `Runs ${job.name} every ${job.everyMinutes} minutes`,
          schedule: Schedule.rate(Duration.minutes(job.everyMinutes)),
          targets: [new LambdaFunction(fn, { deadLetterQueue: props.scheduleDeadLetterQueue, ...scheduleTargetRetry(job.everyMinutes) })],
        }),
      );
    }
  }
}
