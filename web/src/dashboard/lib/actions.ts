// The delete of a detail page (a campaign, member, referral or webhook endpoint): ask first, show the button
// busy, DELETE, then say so and go back to the list; on a failure say why and let the button be pressed again.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { useConfirm, type ConfirmOptions } from '../../ui/confirm';
import { useToast } from '../../ui/toast';

export interface DeleteFlow {
  /** The question asked first; cancelling it does nothing. */
  confirm: ConfirmOptions;
  /** The DELETE request (with its Idempotency-Key); it throws when it fails. */
  remove: () => Promise<unknown>;
  /** The toast once deleted. */
  done: string;
  /** The error toast when the failure has no message of its own. */
  failed: string;
  /** Where to go once deleted (the list). */
  back: string;
}

/** `remove` runs the flow (nothing while `flow` is null: the thing has not loaded); `deleting` is true from the confirmation until the failure or the route away. */
export function useDeleteFlow(flow: DeleteFlow | null): { deleting: boolean; remove: () => Promise<void> } {
  const { route } = useLocation();
  const confirm = useConfirm();
  const notify = useToast();
  const [deleting, setDeleting] = useState(false);

  const remove = async () => {
    if (!flow) return;
    const ok = await confirm(flow.confirm);
    if (ok === null) return;
    setDeleting(true);
    try {
      await flow.remove();
      notify(flow.done);
      route(flow.back);
    } catch (err) {
      notify(err instanceof Error ? err.message : flow.failed, 'error');
      setDeleting(false);
    }
  };

  return { deleting, remove };
}
