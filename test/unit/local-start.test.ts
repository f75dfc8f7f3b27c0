// Issue 23 #22: the first `npm start` was silent for about a minute while it built the dashboard. A line
// says so before the build, and nothing is printed when no build runs.
import { ensureDashboard, type DashboardBuilder } from '../../infra/local/start';
import { setLogLevel, useReadableLogs } from '../../shared/log';

describe('npm start building the dashboard', () => {
  const printed: string[] = [];

  beforeEach(() => {
    printed.length = 0;
    setLogLevel('INFO');
    useReadableLogs();
    const capture = (chunk: unknown): boolean => {
      printed.push(String(chunk));
      return true;
    };
    jest.spyOn(process.stdout, 'write').mockImplementation(capture as unknown as typeof process.stdout.write);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    setLogLevel('SILENT');
    useReadableLogs(false);
  });

  it('says "building the dashboard (first start only)…" before a build, then how long it took', async () => {
    const order: string[] = [];
    const builder: DashboardBuilder = async ({ onBuildStart }) => {
      onBuildStart?.();
      order.push(`build starts after ${printed.length} line(s)`);
      return { built: true };
    };
    await ensureDashboard(builder);
    expect(order).toEqual(['build starts after 1 line(s)']);
    expect(printed[0]).toMatch(/ INFO {2}building the dashboard \(first start only\)…\n$/);
    expect(printed[1]).toMatch(/ INFO {2}dashboard built in \d+\.\d s\n$/);
  });

  it('prints nothing when the dashboard is up to date', async () => {
    await ensureDashboard(async () => ({ built: false }));
    expect(printed).toEqual([]);
  });
});
