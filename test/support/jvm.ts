// The JVM options of every DynamoDB Local a test run starts (the global setup's, and those of the e2e suites
// that start npm start's own): C1-only compilation and the serial collector. For a ten-minute run the C2
// compiler's work does not pay back: 18% less CPU on the round-trip suite for the same wall time.
export const TEST_JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];
