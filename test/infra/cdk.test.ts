// The CDK suites, run as one test file: each of them loads aws-cdk-lib and synthesizes the app, and
// in one file they share one module registry, one warm-up of the CDK's code and (headroom, monitoring)
// one app (./app-fixture.ts). Measured 2026-11-29, global setup included: the four files in one Jest
// process took 73 s and 104 CPU-s, this file 43 s and 55 CPU-s; the suite is CPU-bound on CI's two cores.
// Each file below is a suite of its own: read it for what it checks.
import './stack.cases';
import './nag.cases';
import './headroom.cases';
import './monitoring.cases';
