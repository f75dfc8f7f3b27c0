import { PageHeader } from '../components/page';

export function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <div class="empty">
        <p>There is no page at this address.</p>
        <p>
          <a href="/app/">Go to the overview</a>
        </p>
      </div>
    </>
  );
}
