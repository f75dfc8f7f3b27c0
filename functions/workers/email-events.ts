// SQS consumer of `email-events`: SES bounces and complaints (via EventBridge) suppress a member's address.
import { emailEventsHandler } from '../../shared/email/email-events';

export const handler = emailEventsHandler;
