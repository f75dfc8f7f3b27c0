// shared/config.ts: the settings read from the environment that no other unit test covers.
import { ConfigError, readConfig } from '../../shared/config';

test('DYNAMODB_LOCAL_CONNECTIONS is a non-negative integer, 0 (the SDK default) when unset', () => {
  expect(readConfig({}).dynamodbLocalConnections).toBe(0);
  expect(readConfig({ DYNAMODB_LOCAL_CONNECTIONS: '4' }).dynamodbLocalConnections).toBe(4);
  expect(() => readConfig({ DYNAMODB_LOCAL_CONNECTIONS: 'four' })).toThrow(ConfigError);
  expect(() => readConfig({ DYNAMODB_LOCAL_CONNECTIONS: '-1' })).toThrow(/DYNAMODB_LOCAL_CONNECTIONS must be a non-negative integer/);
});

test('PROVIDER_EVENTS_PER_RECORD=1 turns the per-record path on; anything else leaves the batch path', () => {
  expect(readConfig({}).providerEventsPerRecord).toBe(false);
  expect(readConfig({ PROVIDER_EVENTS_PER_RECORD: '1' }).providerEventsPerRecord).toBe(true);
  expect(readConfig({ PROVIDER_EVENTS_PER_RECORD: '0' }).providerEventsPerRecord).toBe(false);
});
