// The account's campaigns for pickers and names (the members, referrals and rewards pages).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { unwrap } from '../../api/client';
import type { Campaign } from '../../api/types';

/** The account's campaigns (first 100) for pickers and names; empty while loading. */
export function useCampaigns(): { campaigns: Campaign[]; loaded: boolean } {
  const [state, setState] = useState<{ campaigns: Campaign[]; loaded: boolean }>({ campaigns: [], loaded: false });
  useEffect(() => {
    unwrap(api.GET('/v1/campaigns/', { params: { query: { page_size: 100 } } }))
      .then((page) => setState({ campaigns: page.results, loaded: true }))
      .catch(() => setState({ campaigns: [], loaded: true }));
  }, []);
  return state;
}
