// The time the webhook machinery reads (retries, give-up, disabling). Production uses the wall clock;
// tests move it forward instead of sleeping for minutes or days.
export const clock = {
  now: (): number => Date.now(),
};
