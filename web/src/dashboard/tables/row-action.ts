import { useState } from 'preact/hooks';
import { useToast } from '../../ui/toast';

/**
 * The row buttons of the reward and payout tables: `act(kind, call, done)` marks that button busy (the
 * others disabled), runs the request, then toasts `done` and lets the table reload, or toasts the error.
 */
export function useRowAction<Kind extends string>(onChanged: () => void) {
  const notify = useToast();
  const [busy, setBusy] = useState<Kind | null>(null);
  const act = async (kind: Kind, call: () => Promise<unknown>, done: string) => {
    setBusy(kind);
    try {
      await call();
      notify(done);
      onChanged();
    } catch (err) {
      notify(err instanceof Error && err.message ? err.message : 'The request failed.', 'error');
    } finally {
      setBusy(null);
    }
  };
  return { busy, act };
}
