// Jest's test order (jest.config.js testSequencer): Jest's own, which runs the slowest files first from the
// durations its cache remembers, with test/support/durations.json standing in for that cache when it has no
// entry (a fresh clone, as CI runs). Jest's fallback, the largest file first, started the 100-second
// round-trip suite late enough to leave the other workers idle at the end; the longest first keeps all three
// busy to the last minute (about 13 s of wall time on CI's two cores). A file missing from durations.json
// counts as 5 s. Refresh the list after a full run: npx jest --json --outputFile=run.json, then
// node test/support/sequencer.js run.json
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ROOT = join(__dirname, '..', '..');
const DURATIONS = join(__dirname, 'durations.json');
const UNKNOWN_MS = 5_000;

class RefloopSequencer extends Sequencer {
  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    this.durations ??= JSON.parse(readFileSync(DURATIONS, 'utf8'));
    const seconds = this.durations[relative(ROOT, test.path).split('\\').join('/')];
    return seconds != null ? seconds * 1000 : UNKNOWN_MS;
  }
}

module.exports = RefloopSequencer;

// node test/support/sequencer.js run.json: durations.json from a `jest --json` report (seconds, rounded).
if (require.main === module) {
  const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
  const durations = Object.fromEntries(
    report.testResults
      .map((r) => [relative(ROOT, r.name).split('\\').join('/'), Math.max(1, Math.round((r.endTime - r.startTime) / 1000))])
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
  );
  writeFileSync(DURATIONS, `${JSON.stringify(durations, null, 2)}\n`);
  console.log(`${DURATIONS}: ${Object.keys(durations).length} files`);
}
