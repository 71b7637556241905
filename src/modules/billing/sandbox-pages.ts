// HTML of the sandbox checkout and portal pages: plain, readable, no scripts.
import { iso } from '../../lib/time.js';
import type { Plan } from './catalog.js';
import { formatUsd } from './ledger.js';
import type { BillingCustomersTable, BillingSessionsTable, CreditLedgerTable } from './tables.js';

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escape(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}
.note{background:#fff6d6;border:1px solid #e6d48a;padding:.5rem .75rem;border-radius:6px;font-size:.9rem}
button{font:inherit;font-weight:600;background:#635bff;color:#fff;border:0;border-radius:6px;padding:.7rem 1.4rem;cursor:pointer}
table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #ddd}</style></head>
<body>
<p class="note">Sandbox payments: no money moves and no card is charged.</p>
${body}
</body></html>
`;
}

export function sandboxCheckoutPage(input: {
  session: BillingSessionsTable;
  plan: Plan | null;
  expired: boolean;
}): string {
  const { session, plan, expired } = input;
  let heading: string;
  let detail: string;
  let button: string;
  switch (session.purpose) {
    case 'topup':
      heading = 'Add prepaid credits';
      detail = `${formatUsd(Number(session.amount_cents))} will be added to your balance and the card saved for later purchases.`;
      button = `Pay ${formatUsd(Number(session.amount_cents))}`;
      break;
    case 'plan':
      heading = `Subscribe to ${plan?.name ?? session.plan_key}`;
      detail = `${formatUsd(plan?.monthlyCents ?? 0)} a month, renewed monthly; the card is kept on file.`;
      button = `Subscribe for ${formatUsd(plan?.monthlyCents ?? 0)}/month`;
      break;
    case 'upgrade':
      heading = `Change plan to ${plan?.name ?? session.plan_key}`;
      detail = `Your subscription moves to ${formatUsd(plan?.monthlyCents ?? 0)} a month.`;
      button = `Confirm ${formatUsd(plan?.monthlyCents ?? 0)}/month`;
      break;
    default:
      heading = 'Save a card';
      detail = 'A Visa card ending 4242 is saved for future purchases; nothing is charged now.';
      button = 'Save card';
  }
  const state =
    session.status === 'complete'
      ? '<p><strong>This checkout is complete.</strong></p>'
      : expired
        ? '<p><strong>This checkout has expired.</strong></p>'
        : `<form method="post"><button type="submit">${escape(button)}</button></form>${session.return_to ? `\n<p><a href="${escape(session.return_to)}">Cancel and go back</a></p>` : ''}`;
  return page(heading, `<h1>${escape(heading)}</h1>\n<p>${escape(detail)}</p>\n${state}`);
}

export function sandboxDonePage(what: string): string {
  return page('Payment complete', `<h1>Payment complete</h1>\n<p>${escape(what)}.</p>`);
}

export function sandboxPortalPage(input: {
  state: { plan: { name: string; priceUsd: number; status: string } | null; balance: { amount: number } };
  customer: BillingCustomersTable | undefined;
  entries: Array<Pick<CreditLedgerTable, 'created_at' | 'reason' | 'cents'>>;
  returnTo: string | null;
  /** The portal page's own path, for its action forms. */
  self: string;
}): string {
  const { state, customer, entries, returnTo, self } = input;
  const plan = state.plan
    ? `${escape(state.plan.name)}, $${state.plan.priceUsd.toFixed(2)}/month (${escape(state.plan.status)})`
    : 'No plan';
  const card = customer?.payment_method_id
    ? `${escape(customer.card_brand ?? 'card')} ending ${escape(customer.card_last4 ?? '????')}`
    : 'No card on file';
  const rows = entries
    .map(
      (e) =>
        `<tr><td>${iso(Number(e.created_at))}</td><td>${escape(e.reason)}</td><td>${formatUsd(Number(e.cents))}</td></tr>`,
    )
    .join('\n');
  const back = returnTo ? `<p><a href="${escape(returnTo)}">Return</a></p>` : '';
  return page(
    'Billing',
    `<h1>Billing</h1>
<p>Plan: ${plan}</p>
${state.plan ? `<form method="post" action="${escape(self)}/cancel-plan"><button type="submit">Cancel plan</button></form>` : ''}
<p>Card: ${card}</p>
${customer?.payment_method_id ? `<form method="post" action="${escape(self)}/remove-card"><button type="submit">Remove card</button></form>` : ''}
<p>Balance: ${formatUsd(Math.round(state.balance.amount * 100))}</p>
<h2>Ledger</h2>
<table><tr><th>When</th><th>What</th><th>Amount</th></tr>
${rows || '<tr><td colspan="3">No entries</td></tr>'}
</table>
${back}`,
  );
}
