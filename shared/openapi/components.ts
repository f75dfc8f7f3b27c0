// The named component schemas of the OpenAPI document: the response schemas of shared/schemas/responses.ts.
import {
  campaignResponse,
  createdWebhookEndpointResponse,
  healthResponse,
  memberResponse,
  paddleWebhookAccepted,
  planResponse,
  referralResponse,
  rewardEventData,
  rewardResponse,
  serviceLinks,
  subscriptionResponse,
  webhookDeliveryResponse,
  webhookEndpointResponse,
} from '../schemas/responses';

export const COMPONENTS = {
  Referral: referralResponse,
  Reward: rewardResponse,
  Campaign: campaignResponse,
  Member: memberResponse,
  Subscription: subscriptionResponse,
  Plan: planResponse,
  WebhookEndpoint: webhookEndpointResponse,
  CreatedWebhookEndpoint: createdWebhookEndpointResponse,
  WebhookDelivery: webhookDeliveryResponse,
  RewardEventData: rewardEventData,
  PaddleWebhookAccepted: paddleWebhookAccepted,
  ServiceLinks: serviceLinks,
  Health: healthResponse,
};
