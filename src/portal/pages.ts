/**
 * The portal's pages: each handler reads the session's caller (plugin.ts), calls the same
 * service the matching /v1 route calls, and renders the answer. Service errors are the
 * API's own messages: a 400 is shown next to the form field it names, a 404 (another
 * account's id included) is the 404 page, anything else the error page.
 */
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, notFound } from '../core/errors.ts';
import { isUuid } from '../core/ids.ts';
import { COUNTRIES, EVENT_TYPES, statuses } from '../countries/registry.ts';
import type { Runtime } from '../runtime.ts';
import type { AccountUsageService } from '../services/account-usage.ts';
import { PERMISSION_NAMES, type ApiKeyService } from '../services/api-keys.ts';
import type { LocationView } from '../services/locations.ts';
import type { PortalSessionService } from '../services/portal-sessions.ts';
import type { createRetryQueueService } from '../services/retry-queue.ts';
import type { SubscriptionService } from '../services/subscriptions.ts';
import type { TransactionView } from '../services/transaction-view.ts';
import type { WebhookService } from '../services/webhooks.ts';
import type { Environment } from '../crypto/api-key.ts';
import { html, seg, type HtmlValue, type SafeHtml } from './html.ts';
import { actionForm, badge, checkboxes, field, money, page, select, when, type Section } from './layout.ts';
import { NOTICES, SESSION_COOKIE, callerOf, sendPage, sessionView, type PortalCaller } from './context.ts';

export interface PortalServices {
  rt: Runtime;
  apiKeys: ApiKeyService;
  portalSessions: PortalSessionService;
  retryQueue: ReturnType<typeof createRetryQueueService>;
  subscriptions: SubscriptionService;
  usage: AccountUsageService;
  webhooks: WebhookService;
}

const PAGE_SIZE = 25;
type Form = Record<string, string | string[] | undefined>;

/** A form field as one string (the first value when repeated). */
const str = (f: Form, k: string): string => {
  const v = f[k];
  return String((Array.isArray(v) ? v[0] : v) ?? '');
};
/** A repeated form field (checkboxes) as a list. */
const list = (f: Form, k: string): string[] => {
  const v = f[k];
  return v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)];
};
const formOf = (req: FastifyRequest): Form => (req.body ?? {}) as Form;
const idParam = (req: FastifyRequest, what: string): string => {
  const id = (req.params as { id: string }).id;
  // Not one of ours: the same 404 as another account's id (the services expect UUIDs).
  if (!isUuid(id)) throw notFound(`${what} not found`);
  return id;
};

/**
 * The form field a service's 400 message is about: the first field name the message
 * mentions as a word (`country_config.legal_name is required…` → country_config), or none
 * (shown above the form).
 */
export function fieldOfMessage(message: string, fields: readonly string[]): string | undefined {
  return fields.find((f) => new RegExp(`(^|[^A-Za-z0-9_])${f}([^A-Za-z0-9_]|$)`).test(message));
}

interface Ctx {
  c: PortalCaller;
  title: string;
  section: Section;
  notice?: string | undefined;
}

function render(reply: FastifyReply, ctx: Ctx, body: HtmlValue) {
  return sendPage(reply, page({ title: ctx.title, session: sessionView(ctx.c), section: ctx.section, notice: ctx.notice }, body));
}

const noticeOf = (req: FastifyRequest): string | undefined => {
  const n = (req.query as { notice?: string }).notice;
  return n ? NOTICES[n] : undefined;
};

/** The most pages a list goes to: a larger `page` (typed into the address bar) shows the last one, empty. */
const MAX_PAGE = 1_000_000;
const offsetOf = (req: FastifyRequest): number => {
  const p = Number((req.query as { page?: string }).page ?? '1');
  return Number.isInteger(p) && p > 1 ? (Math.min(p, MAX_PAGE) - 1) * PAGE_SIZE : 0;
};

/** Previous/next links keeping the other query parameters. */
function pager(base: string, query: Record<string, string>, offset: number, total: number): SafeHtml {
  const pageNo = offset / PAGE_SIZE + 1;
  const link = (n: number) => `${base}?${new URLSearchParams({ ...query, page: String(n) }).toString()}`;
  return html`<nav class="pager" aria-label="Pages">
${pageNo > 1 ? html`<a href="${link(pageNo - 1)}">← Previous</a>` : ''}
<span class="muted">${total === 0 ? 'None' : `${offset + 1}–${Math.min(offset + PAGE_SIZE, total)} of ${total}`}</span>
${offset + PAGE_SIZE < total ? html`<a href="${link(pageNo + 1)}">Next →</a>` : ''}
</nav>`;
}

/**
 * A service refusal of what the form asked (400, 403, 409: invalid, not allowed, a limit)
 * → its message for the form, re-rendered with that status; a 404 (another account's id)
 * and anything else go on to the error handler.
 */
function formError(err: unknown, reply?: FastifyReply): string {
  if (err instanceof ApiError && [400, 403, 409].includes(err.status)) {
    reply?.code(err.status);
    return err.message;
  }
  throw err;
}

export function registerPages(app: FastifyInstance, s: PortalServices): void {
  const { rt } = s;

  // ---- account: onboarding, subscription, usage -------------------------------------------
  /**
   * Subscribe (no subscription yet), or subscribe again when the subscription is suspended:
   * the merchant's way back after a failed payment or a deleted subscription (the suspension
   * e-mails send them here). The same service as POST /v1/subscriptions.
   */
  function subscribeForm(c: PortalCaller, values: Form = {}, error?: string): SafeHtml {
    const on = error ? fieldOfMessage(error, ['company_name', 'billing_email', 'payment_method_id', 'merchant_count', 'billing_interval']) : undefined;
    const err = (k: string) => (on === k ? error : undefined);
    return html`
${error && !on ? html`<p class="alert" role="alert">${error}</p>` : ''}
<form class="stack" method="post" action="/portal/account/subscription" novalidate>
<input type="hidden" name="_csrf" value="${c.csrf}">
${field({ name: 'company_name', label: 'Company name', value: str(values, 'company_name'), error: err('company_name'), required: true })}
${field({ name: 'billing_email', label: 'Billing e-mail', value: str(values, 'billing_email'), error: err('billing_email'), required: true })}
${field({ name: 'payment_method_id', label: 'Payment method id', value: str(values, 'payment_method_id'), error: err('payment_method_id'), required: true, hint: 'The id your billing provider gave the card or mandate (e.g. pm_…).' })}
${field({ name: 'merchant_count', label: 'Merchants', value: str(values, 'merchant_count') || '1', error: err('merchant_count'), required: true })}
${select({ name: 'billing_interval', label: 'Billing', options: [['month', 'Monthly'], ['year', 'Yearly (ten months)']], value: str(values, 'billing_interval') || 'month', error: err('billing_interval') })}
<div><button type="submit">Subscribe</button></div>
</form>`;
  }

  app.post('/account/subscription', { config: { allowInactiveAccount: 'suspended' } }, async (req, reply) => {
    const c = callerOf(req);
    const f = formOf(req);
    try {
      const count = str(f, 'merchant_count').trim();
      await s.subscriptions.create(c.auth, {
        company_name: str(f, 'company_name'), billing_email: str(f, 'billing_email'), payment_method_id: str(f, 'payment_method_id'),
        // Not a whole number: the service's own message (merchant_count must be …).
        merchant_count: /^\d{1,9}$/.test(count) ? Number(count) : Number.NaN,
        billing_interval: (str(f, 'billing_interval') || 'month') as 'month' | 'year',
      });
    } catch (err) {
      const message = formError(err, reply);
      return render(reply, { c, title: 'Subscribe', section: 'account' }, html`<section class="card"><h2>Subscribe</h2>${subscribeForm(c, f, message)}</section>`);
    }
    return reply.redirect('/portal/account?notice=subscribed', 303);
  });

  app.get('/account', { config: { allowInactiveAccount: true } }, async (req, reply) => {
    const c = callerOf(req);
    const q = req.query as { period?: string };
    const onboarding = await s.usage.onboarding(c.auth);
    const subscription = await s.subscriptions.get(c.auth).catch((err) => {
      if (err instanceof ApiError && err.status === 404) return null;
      throw err;
    });
    let usage;
    let periodError: string | undefined;
    try {
      usage = await s.usage.usage(c.auth, q.period ? { period: q.period } : {});
    } catch (err) {
      periodError = formError(err);
      usage = await s.usage.usage(c.auth, {});
    }
    return render(reply, { c, title: 'Account', section: 'account', notice: noticeOf(req) }, html`
${c.auth.accountStatus !== 'active' ? html`<p class="alert" role="alert">This account is ${c.auth.accountStatus}: only this page is available.${c.auth.accountStatus === 'suspended' ? ' Subscribe again below to restore it.' : ''}</p>` : ''}
<section class="card" aria-labelledby="h-onboarding">
<h2 id="h-onboarding">Getting started (${onboarding.completed_steps} of ${onboarding.total_steps})</h2>
<ul class="checklist">${onboarding.steps.map((st) => html`<li>${st.done ? html`<span class="status status-success">done</span>` : html`<span class="status status-pending">to do</span>`} ${STEP_LABELS[st.step] ?? st.step}${st.done ? html` <span class="muted">(${when(st.done_at)})</span>` : ''}</li>`)}</ul>
</section>
<section class="card" aria-labelledby="h-subscription">
<h2 id="h-subscription">Subscription</h2>
${subscription ? html`<dl class="facts">
<dt>Status</dt><dd>${badge(subscription.status)}</dd>
<dt>Company</dt><dd>${subscription.company_name}</dd>
<dt>Merchants</dt><dd>${subscription.merchant_count} (tier ${subscription.current_tier})</dd>
<dt>Price</dt><dd>${money(subscription.period_amount, subscription.currency)} per ${subscription.billing_interval}</dd>
<dt>Current period</dt><dd>${when(subscription.current_period_start)} – ${when(subscription.current_period_end)}</dd>
</dl>` : html`<p>No subscription yet: test keys work without one; live use is billed by subscription (here, or <code>POST /v1/subscriptions</code>).</p>`}
${(!subscription || subscription.status === 'suspended') && c.auth.accountStatus !== 'cancelled'
    ? html`${subscription ? html`<h3>Subscribe again</h3><p>A new subscription replaces the suspended one, and the account is active again at once.</p>` : ''}${subscribeForm(c)}` : ''}
</section>
<section class="card" aria-labelledby="h-usage">
<h2 id="h-usage">Usage in ${usage.period}</h2>
<form class="filters" method="get" action="/portal/account">
${field({ name: 'period', label: 'Month (YYYY-MM)', value: q.period ?? usage.period, error: periodError })}
<div><button type="submit" class="secondary">Show</button></div>
</form>
<dl class="facts">
<dt>Transactions</dt><dd>${usage.transactions.total} (test ${usage.transactions.test}, live ${usage.transactions.live})</dd>
<dt>Active merchants</dt><dd>live ${usage.active_merchants.live}, test ${usage.active_merchants.test}</dd>
<dt>Billable so far</dt><dd>${money(usage.billing.billable_amount, usage.billing.currency)} (estimated for the month: ${money(usage.billing.estimated_amount, usage.billing.currency)})</dd>
</dl>
${usage.transactions.by_country.length ? html`<div class="table-wrap"><table><caption class="muted">By country</caption><thead><tr><th scope="col">Country</th><th scope="col">Environment</th><th scope="col">Transactions</th></tr></thead><tbody>
${usage.transactions.by_country.map((r) => html`<tr><td>${r.country}</td><td>${r.environment}</td><td>${r.count}</td></tr>`)}</tbody></table></div>` : ''}
</section>`);
  });

  // ---- locations ---------------------------------------------------------------------------
  const LOCATION_FIELDS = ['country_config', 'tax_id', 'country', 'address', 'name'] as const;

  app.get('/locations', async (req, reply) => {
    const c = callerOf(req);
    const offset = offsetOf(req);
    const res = await rt.locations.list(c.auth, {}, { limit: PAGE_SIZE, offset });
    return render(reply, { c, title: 'Locations', section: 'locations', notice: noticeOf(req) }, html`
<p class="actions"><a class="button" href="/portal/locations/new">Register a location</a></p>
${res.data.length === 0 ? html`<p>No locations yet.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Country</th><th scope="col">System</th><th scope="col">Tax id</th><th scope="col">Status</th><th scope="col">Certificate expiry</th></tr></thead>
<tbody>${res.data.map((l) => html`<tr><td><a href="/portal/locations/${seg(l.id)}">${l.name}</a></td><td>${l.country}</td><td>${l.system ?? '—'}</td><td>${l.tax_id ?? '—'}</td><td>${badge(l.status)}</td><td>${when(l.cert_expiry)}</td></tr>`)}</tbody>
</table></div>`}
${pager('/portal/locations', {}, offset, res.total)}`);
  });

  function locationForm(c: PortalCaller, values: Form, error?: string): SafeHtml {
    const on = error ? fieldOfMessage(error, LOCATION_FIELDS) : undefined;
    const err = (f: string) => (on === f ? error : undefined);
    return html`
${error && !on ? html`<p class="alert" role="alert" id="form-error">${error}</p>` : ''}
${error && on ? html`<p class="alert" role="alert">The location was not created: see the message under <a href="#f-${on}">${on.replace(/_/g, ' ')}</a>.</p>` : ''}
<form class="stack card" method="post" action="/portal/locations" novalidate>
<input type="hidden" name="_csrf" value="${c.csrf}">
${field({ name: 'name', label: 'Name', value: str(values, 'name'), error: err('name'), required: true })}
${select({ name: 'country', label: 'Country', value: str(values, 'country'), error: err('country'), options: [['', 'Choose…'], ...COUNTRIES.map((k) => [k, k] as const)] })}
${field({ name: 'tax_id', label: 'Tax id (NIF, partita IVA, SIRET, AFM)', value: str(values, 'tax_id'), error: err('tax_id') })}
${field({ name: 'address', label: 'Address', value: str(values, 'address'), error: err('address') })}
${field({ name: 'country_config', label: 'Country configuration (JSON)', type: 'textarea', value: str(values, 'country_config') || '{}', error: err('country_config'), hint: 'The fiscal system and its settings, e.g. {"system": "verifactu", "legal_name": "…", "certificate_id": "…", "software_nif": "…"} for Spain. docs/countries lists every field.' })}
<div><button type="submit">Register location</button></div>
</form>`;
  }

  app.get('/locations/new', async (req, reply) => {
    const c = callerOf(req);
    return render(reply, { c, title: 'Register a location', section: 'locations' }, locationForm(c, {}));
  });

  /** The JSON of the config textarea: an object, or the 400 the form shows under it. */
  function configOf(text: string): Record<string, unknown> | undefined {
    if (!text.trim()) return undefined;
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw badRequest('country_config must be a JSON object: the text is not valid JSON');
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('country_config must be a JSON object');
    return v as Record<string, unknown>;
  }

  app.post('/locations', async (req, reply) => {
    const c = callerOf(req);
    const f = formOf(req);
    let created: LocationView;
    try {
      // The route's schema checks these two before the service (http/routes/v1/locations.ts).
      if (!str(f, 'name').trim()) throw badRequest('name is required');
      if (!str(f, 'country').trim()) throw badRequest('country is required');
      created = await rt.locations.create(c.auth, {
        name: str(f, 'name'), country: str(f, 'country'),
        address: str(f, 'address') || undefined, tax_id: str(f, 'tax_id') || undefined,
        country_config: configOf(str(f, 'country_config')),
      });
    } catch (err) {
      const message = formError(err, reply);
      return render(reply, { c, title: 'Register a location', section: 'locations' }, locationForm(c, f, message));
    }
    return reply.redirect(`/portal/locations/${seg(created.id)}?notice=location_created`, 303);
  });

  function locationPage(c: PortalCaller, l: LocationView, values?: Form, error?: string): SafeHtml {
    const on = error ? fieldOfMessage(error, ['country_config', 'address', 'name']) : undefined;
    const err = (k: string) => (on === k ? error : undefined);
    const v = (k: string, current: string) => (values ? str(values, k) : current);
    return html`
<dl class="facts card">
<dt>Status</dt><dd>${badge(l.status)}</dd>
<dt>Country</dt><dd>${l.country}</dd>
<dt>Fiscal system</dt><dd>${l.system ?? '—'}</dd>
<dt>Tax id</dt><dd>${l.tax_id ?? '—'}</dd>
<dt>Certificate expiry</dt><dd>${when(l.cert_expiry)}</dd>
<dt>Created</dt><dd>${when(l.created_at)}</dd>
<dt>Id</dt><dd><code>${l.id}</code></dd>
</dl>
<p class="actions">
<a href="/portal/transactions?location_id=${seg(l.id)}">Transactions at this location</a>
${l.status === 'active'
    ? actionForm(`/portal/locations/${seg(l.id)}/deactivate`, c.csrf, 'Deactivate', 'danger')
    : actionForm(`/portal/locations/${seg(l.id)}/activate`, c.csrf, 'Activate again')}
</p>
<h2>Edit</h2>
${error && !on ? html`<p class="alert" role="alert">${error}</p>` : ''}
${error && on ? html`<p class="alert" role="alert">Not saved: see the message under <a href="#f-${on}">${on.replace(/_/g, ' ')}</a>.</p>` : ''}
<form class="stack card" method="post" action="/portal/locations/${seg(l.id)}" novalidate>
<input type="hidden" name="_csrf" value="${c.csrf}">
${field({ name: 'name', label: 'Name', value: v('name', l.name), error: err('name'), required: true })}
${field({ name: 'address', label: 'Address', value: v('address', l.address ?? ''), error: err('address') })}
${field({ name: 'country_config', label: 'Country configuration (JSON)', type: 'textarea', value: v('country_config', JSON.stringify(l.country_config, null, 2)), error: err('country_config'), hint: 'Secrets are shown masked; leave a masked value as it is to keep the stored secret.' })}
<div><button type="submit">Save</button></div>
</form>`;
  }

  app.get('/locations/:id', async (req, reply) => {
    const c = callerOf(req);
    const l = await rt.locations.get(c.auth, idParam(req, 'location'));
    return render(reply, { c, title: `Location ${l.name}`, section: 'locations', notice: noticeOf(req) }, locationPage(c, l));
  });

  app.post('/locations/:id', async (req, reply) => {
    const c = callerOf(req);
    const id = idParam(req, 'location');
    const f = formOf(req);
    try {
      if (!str(f, 'name').trim()) throw badRequest('name is required');
      await rt.locations.patch(c.auth, id, {
        name: str(f, 'name'), address: str(f, 'address').trim() ? str(f, 'address') : null, country_config: configOf(str(f, 'country_config')) ?? {},
      });
    } catch (err) {
      const message = formError(err, reply);
      const l = await rt.locations.get(c.auth, id);
      return render(reply, { c, title: `Location ${l.name}`, section: 'locations' }, locationPage(c, l, f, message));
    }
    return reply.redirect(`/portal/locations/${seg(id)}?notice=location_saved`, 303);
  });

  for (const [action, status, notice] of [['deactivate', 'inactive', 'location_deactivated'], ['activate', 'active', 'location_activated']] as const) {
    app.post(`/locations/:id/${action}`, async (req, reply) => {
      const id = idParam(req, 'location');
      await rt.locations.patch(callerOf(req).auth, id, { status });
      return reply.redirect(`/portal/locations/${seg(id)}?notice=${notice}`, 303);
    });
  }

  // ---- transactions ------------------------------------------------------------------------
  const DATE = /^\d{4}-\d{2}-\d{2}$/;
  /** A YYYY-MM-DD date as the start of that UTC day, or undefined when it is not a date. */
  const dayStart = (v: string): Date | undefined => {
    if (!DATE.test(v)) return undefined;
    const d = new Date(`${v}T00:00:00.000Z`);
    return Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v ? undefined : d;
  };

  app.get('/transactions', async (req, reply) => {
    const c = callerOf(req);
    const q = req.query as Record<string, string | undefined>;
    const status = q.status && statuses.isKnown(q.status) ? q.status : undefined;
    const locationId = q.location_id || undefined;
    const errors: Record<string, string> = {};
    const from = q.from ? dayStart(q.from) : undefined;
    const to = q.to ? dayStart(q.to) : undefined;
    if (q.from && !from) errors.from = 'from must be a date (YYYY-MM-DD)';
    if (q.to && !to) errors.to = 'to must be a date (YYYY-MM-DD)';
    if (from && to && to < from) errors.to = 'to must not be before from';
    const offset = offsetOf(req);
    const locations = (await rt.locations.list(c.auth, {}, { limit: 200, offset: 0 })).data;
    const names = new Map(locations.map((l) => [l.id, l.name]));
    const res = Object.keys(errors).length
      ? { data: [] as TransactionView[], total: 0 }
      : await rt.transactions.list(c.auth, {
        status, location_id: locationId, created_from: from, created_before: to ? new Date(to.getTime() + 86_400_000) : undefined,
      }, { limit: PAGE_SIZE, offset });
    const keep = Object.fromEntries(Object.entries({ status: status ?? '', location_id: locationId ?? '', from: q.from ?? '', to: q.to ?? '' }).filter(([, v]) => v));
    return render(reply, { c, title: 'Transactions', section: 'transactions' }, html`
<form class="filters card" method="get" action="/portal/transactions" aria-label="Filter transactions">
${select({ name: 'status', label: 'Status', value: status ?? '', options: [['', 'Any'], ...statuses.names.map((n) => [n, n.replace(/_/g, ' ')] as const)] })}
${select({ name: 'location_id', label: 'Location', value: locationId ?? '', options: [['', 'Any'], ...locations.map((l) => [l.id, l.name] as const)] })}
${field({ name: 'from', label: 'From (date)', type: 'date', value: q.from ?? '', error: errors.from })}
${field({ name: 'to', label: 'To (date, inclusive)', type: 'date', value: q.to ?? '', error: errors.to })}
<div><button type="submit">Filter</button></div>
</form>
${res.data.length === 0 ? html`<p>No transactions match.</p>` : html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Created</th><th scope="col">Transaction</th><th scope="col">Location</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">Fiscal id</th></tr></thead>
<tbody>${res.data.map((t) => html`<tr><td>${when(t.created_at)}</td><td><a href="/portal/transactions/${seg(t.id)}"><code>${t.id.slice(-8)}</code></a></td><td>${names.get(t.location_id) ?? t.location_id.slice(-8)}</td><td>${t.type}</td><td>${badge(t.status)}</td><td>${money(t.amount, t.currency)}</td><td>${t.fiscal_id ?? '—'}</td></tr>`)}</tbody>
</table></div>`}
${pager('/portal/transactions', keep, offset, res.total)}`);
  });

  /** The authority's error of a failed transaction and what the translation service makes of it. */
  async function failureOf(t: TransactionView): Promise<SafeHtml | ''> {
    const submitError = (t.response_payload as { submit_error?: { error_code?: string; raw_message?: string } }).submit_error;
    if (!t.error_message && !submitError) return '';
    const translated = submitError?.error_code
      ? (await rt.translator.resolve({ country: t.country, system: t.system, code: submitError.error_code, message: submitError.raw_message })).result
      : undefined;
    return html`<section class="alert" aria-labelledby="h-error-${t.id}">
<h2 id="h-error-${t.id}">Why it failed</h2>
<p>${t.error_message ?? translated?.user_message ?? 'The translation of this error is being prepared.'}</p>
${translated ? html`<dl class="facts">
<dt>What it means</dt><dd>${translated.translation}</dd>
<dt>Category</dt><dd>${translated.category} (${translated.retriable ? 'retried automatically' : 'not retried: fix and send again'})</dd>
<dt>Authority code</dt><dd><code>${submitError?.error_code}</code></dd>
${submitError?.raw_message ? html`<dt>Authority message</dt><dd>${submitError.raw_message}</dd>` : ''}
</dl>` : ''}
</section>`;
  }

  app.get('/transactions/:id', async (req, reply) => {
    const c = callerOf(req);
    const t = await rt.transactions.get(c.auth, idParam(req, 'transaction'));
    const location = await rt.locations.get(c.auth, t.location_id).catch(() => null);
    return render(reply, { c, title: `Transaction ${t.id.slice(-8)}`, section: 'transactions' }, html`
${await failureOf(t)}
<dl class="facts card">
<dt>Status</dt><dd>${badge(t.status)}</dd>
<dt>Type</dt><dd>${t.type}</dd>
<dt>Amount</dt><dd>${money(t.amount, t.currency)}</dd>
<dt>Location</dt><dd>${location ? html`<a href="/portal/locations/${seg(location.id)}">${location.name}</a>` : t.location_id}</dd>
<dt>Country / system</dt><dd>${t.country} / ${t.system}</dd>
<dt>Environment</dt><dd>${t.environment}</dd>
<dt>Fiscal id</dt><dd>${t.fiscal_id ?? '—'}</dd>
${t.fiscal_id_upstream ? html`<dt>Authority id</dt><dd>${t.fiscal_id_upstream}</dd>` : ''}
<dt>Created</dt><dd>${when(t.created_at)}</dd>
<dt>Submitted</dt><dd>${when(t.submitted_at)}</dd>
<dt>Completed</dt><dd>${when(t.completed_at)}</dd>
${t.cancels_transaction_id ? html`<dt>Cancels</dt><dd><a href="/portal/transactions/${seg(t.cancels_transaction_id)}">${t.cancels_transaction_id}</a></dd>` : ''}
${t.cancellation_transaction_id ? html`<dt>Cancelled by</dt><dd><a href="/portal/transactions/${seg(t.cancellation_transaction_id)}">${t.cancellation_transaction_id}</a></dd>` : ''}
<dt>Id</dt><dd><code>${t.id}</code></dd>
</dl>
<p class="actions">
<a class="button" href="/portal/transactions/${seg(t.id)}/receipt">Receipt</a>
<a class="button secondary" href="/portal/transactions/${seg(t.id)}/fiscal-record">Fiscal record</a>
</p>
${t.render_hints.length ? html`<h2>Receipt items (render hints)</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Item</th><th scope="col">Placement</th><th scope="col">Mandatory</th><th scope="col">Value</th></tr></thead>
<tbody>${t.render_hints.map((h) => html`<tr><td>${h.key}</td><td>${h.placement}</td><td>${h.mandatory ? 'yes' : 'no'}</td><td>${h.kind === 'image_url' ? html`<img src="/portal/transactions/${seg(t.id)}/qr.png" alt="QR code of the receipt" width="120" height="120">` : html`<code>${h.value}</code>`}</td></tr>`)}</tbody>
</table></div>` : ''}`);
  });

  app.get('/transactions/:id/fiscal-record', async (req, reply) => {
    const record = await rt.transactions.fiscalRecord(callerOf(req).auth, idParam(req, 'transaction'));
    // As text: an XML document served as XML on our origin could carry markup a browser runs.
    return reply.header('content-type', 'text/plain; charset=utf-8').header('content-disposition', 'inline').send(record.body);
  });

  app.get('/transactions/:id/qr.png', async (req, reply) => {
    const png = await rt.transactions.qrImage(callerOf(req).auth, idParam(req, 'transaction'));
    return reply.header('content-type', 'image/png').send(png);
  });

  /**
   * The receipt: the receipt service's HTML (GET /v1/transactions/{id}/receipt?format=html,
   * asked in-process with the session's own token), or, when that route is absent or refuses
   * the session, the render hints drawn here. The transaction is read first, so another
   * account's id is the 404 page either way.
   */
  app.get('/transactions/:id/receipt', async (req, reply) => {
    const c = callerOf(req);
    const t = await rt.transactions.get(c.auth, idParam(req, 'transaction'));
    const answer = await app.inject({
      method: 'GET', url: `/v1/transactions/${seg(t.id)}/receipt?format=html`,
      headers: { authorization: `Bearer ${req.cookies[SESSION_COOKIE]}`, 'x-request-id': req.id },
    });
    const type = String(answer.headers['content-type'] ?? '');
    if (answer.statusCode === 200 && type.startsWith('text/html')) {
      // The receipt document is the receipt service's: its <style> blocks are allowed by hash, nothing else inline.
      const hashes = [...answer.body.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)]
        .map((m) => `'sha256-${crypto.createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`);
      return reply
        .header('content-security-policy', `default-src 'none'; img-src 'self' data:; style-src 'self' ${hashes.join(' ')}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`)
        .header('content-type', type).send(answer.body);
    }
    const location = await rt.locations.get(c.auth, t.location_id).catch(() => null);
    return render(reply, { c, title: `Receipt ${t.fiscal_id ?? t.id.slice(-8)}`, section: 'transactions' }, html`
<p class="muted">Drawn from the transaction and its render hints (every mandatory item, in its placement).</p>
${fallbackReceipt(t, location)}
<p><a href="/portal/transactions/${seg(t.id)}">Back to the transaction</a></p>`);
  });

  // ---- failures and the retry queue --------------------------------------------------------
  app.get('/failures', async (req, reply) => {
    const c = callerOf(req);
    const failed = await rt.transactions.list(c.auth, { status: 'failed_permanent' }, { limit: PAGE_SIZE, offset: 0 });
    const retrying = await rt.transactions.list(c.auth, { status: 'failed' }, { limit: PAGE_SIZE, offset: 0 });
    const queue = await s.retryQueue.list(c.auth, undefined, { limit: PAGE_SIZE, offset: offsetOf(req) });
    const stats = await s.retryQueue.stats(c.auth);
    const rows = [...retrying.data, ...failed.data];
    const failures = await Promise.all(rows.map(async (t) => html`<article class="card">
<h2><a href="/portal/transactions/${seg(t.id)}">Transaction ${t.id.slice(-8)}</a> ${badge(t.status)}</h2>
<p class="muted">${money(t.amount, t.currency)} · ${t.country} / ${t.system} · ${when(t.created_at)}</p>
${await failureOf(t)}
</article>`));
    return render(reply, { c, title: 'Failures', section: 'failures' }, html`
<p>Failed submissions with the authority's error in plain words, and the retry queue.</p>
${failures.length ? failures : html`<p class="notice">No failed transactions.</p>`}
<h2>Retry queue</h2>
<p class="muted">Last 24 hours: ${stats.pending} pending, ${stats.processing} processing, ${stats.completed} completed, ${stats.failed} failed (will retry), ${stats.dead} dead.</p>
${queue.data.length ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Transaction</th><th scope="col">Status</th><th scope="col">Attempt</th><th scope="col">Next retry</th><th scope="col">Last error</th></tr></thead>
<tbody>${queue.data.map((e) => html`<tr><td>${e.transaction_id ? html`<a href="/portal/transactions/${seg(e.transaction_id)}"><code>${e.transaction_id.slice(-8)}</code></a>` : '—'}</td><td>${badge(e.status)}</td><td>${e.attempt} of ${e.max_attempts}</td><td>${when(e.next_retry_at)}</td><td>${e.last_error ?? '—'}</td></tr>`)}</tbody>
</table></div>` : html`<p>The retry queue is empty.</p>`}
${pager('/portal/failures', {}, offsetOf(req), queue.total)}`);
  });

  // ---- webhooks ----------------------------------------------------------------------------
  function webhookForm(c: PortalCaller, values: Form, error?: string): SafeHtml {
    const on = error ? fieldOfMessage(error, ['url', 'events', 'description']) ?? (/event type/.test(error) ? 'events' : undefined) : undefined;
    return html`<h2>Add a webhook</h2>
${error && !on ? html`<p class="alert" role="alert">${error}</p>` : ''}
<form class="stack card" method="post" action="/portal/webhooks" novalidate>
<input type="hidden" name="_csrf" value="${c.csrf}">
${field({ name: 'url', label: 'URL (https)', type: 'url', value: str(values, 'url'), error: on === 'url' ? error : undefined, required: true })}
${checkboxes({ name: 'events', legend: 'Events', options: EVENT_TYPES, checked: list(values, 'events'), error: on === 'events' ? error : undefined })}
${field({ name: 'description', label: 'Description (optional)', value: str(values, 'description') })}
<div><button type="submit">Add webhook</button></div>
</form>`;
  }

  async function webhooksPage(reply: FastifyReply, c: PortalCaller, notice?: string, form?: { values: Form; error: string }) {
    const { data } = await s.webhooks.list(c.auth);
    return render(reply, { c, title: 'Webhooks', section: 'webhooks', notice }, html`
${data.length ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Enabled</th><th scope="col">Created</th></tr></thead>
<tbody>${data.map((w) => html`<tr><td><a href="/portal/webhooks/${seg(w.id)}">${w.url}</a></td><td>${w.events.join(', ')}</td><td>${w.enabled ? 'yes' : 'no'}</td><td>${when(w.created_at)}</td></tr>`)}</tbody>
</table></div>` : html`<p>No webhooks yet.</p>`}
${webhookForm(c, form?.values ?? {}, form?.error)}`);
  }

  app.get('/webhooks', async (req, reply) => webhooksPage(reply, callerOf(req), noticeOf(req)));

  app.post('/webhooks', async (req, reply) => {
    const c = callerOf(req);
    const f = formOf(req);
    let created;
    try {
      created = await s.webhooks.create(c.auth, { url: str(f, 'url'), events: list(f, 'events'), description: str(f, 'description') || undefined } as never);
    } catch (err) {
      const error = formError(err, reply);
      return webhooksPage(reply, c, undefined, { values: f, error });
    }
    return render(reply, { c, title: 'Webhook added', section: 'webhooks' }, html`
<div class="warn" role="status"><p><strong>Copy the signing secret now: it is shown only this once.</strong> It verifies the X-Signature of every delivery.</p>
<code class="secret" id="secret">${created.secret}</code></div>
<p><a class="button" href="/portal/webhooks/${seg(created.id)}">Go to the webhook</a></p>`);
  });

  app.get('/webhooks/:id', async (req, reply) => {
    const c = callerOf(req);
    const id = idParam(req, 'webhook');
    const w = await s.webhooks.get(c.auth, id);
    const log = await s.webhooks.deliveries(c.auth, id, {}, { limit: PAGE_SIZE, offset: offsetOf(req) });
    return render(reply, { c, title: 'Webhook', section: 'webhooks', notice: noticeOf(req) }, html`
<dl class="facts card">
<dt>URL</dt><dd>${w.url}</dd>
<dt>Events</dt><dd>${w.events.join(', ')}</dd>
<dt>Enabled</dt><dd>${w.enabled ? 'yes' : 'no'}</dd>
${w.description ? html`<dt>Description</dt><dd>${w.description}</dd>` : ''}
<dt>Created</dt><dd>${when(w.created_at)}</dd>
</dl>
<p class="actions">${actionForm(`/portal/webhooks/${seg(w.id)}/test`, c.csrf, 'Send test', '')}</p>
<h2>Delivery log</h2>
${log.data.length ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Created</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Answer</th><th scope="col">Error</th><th scope="col">Delivered</th></tr></thead>
<tbody>${log.data.map((d) => html`<tr><td>${when(d.created_at)}</td><td>${d.event}</td><td>${badge(d.status)}</td><td>${d.attempt} of ${d.max_attempts}</td><td>${d.response_status ?? '—'}</td><td>${d.error ?? '—'}</td><td>${when(d.delivered_at)}</td></tr>`)}</tbody>
</table></div>` : html`<p>No deliveries yet.</p>`}
${pager(`/portal/webhooks/${seg(w.id)}`, {}, offsetOf(req), log.total)}`);
  });

  app.post('/webhooks/:id/test', async (req, reply) => {
    const id = idParam(req, 'webhook');
    await s.webhooks.sendTest(callerOf(req).auth, id);
    rt.worker.notify();
    return reply.redirect(`/portal/webhooks/${seg(id)}?notice=test_sent`, 303);
  });

  // ---- certificates ------------------------------------------------------------------------
  app.get('/certificates', async (req, reply) => {
    const c = callerOf(req);
    const certs = await rt.certificates.list(c.auth);
    const now = rt.deps.clock.now().getTime();
    const days = (d: Date) => Math.floor((new Date(d).getTime() - now) / 86_400_000);
    return render(reply, { c, title: 'Certificates', section: 'certificates' }, html`
<p>Signing certificates of your locations. Upload with <code>POST /v1/certificates</code> (multipart).</p>
${certs.data.length ? html`<div class="table-wrap"><table>
<thead><tr><th scope="col">Certificate id</th><th scope="col">Subject</th><th scope="col">NIF</th><th scope="col">Valid from</th><th scope="col">Expires</th><th scope="col">Days left</th></tr></thead>
<tbody>${certs.data.map((x) => {
    const left = days(x.not_after);
    return html`<tr><td><code>${x.certificate_id}</code></td><td>${x.subject_cn ?? '—'}</td><td>${x.nif ?? '—'}</td><td>${when(x.not_before)}</td><td>${when(x.not_after)}</td><td>${left < 0 ? html`<span class="status status-failed">expired</span>` : left <= 30 ? html`<span class="status status-pending">${left} days</span>` : `${left} days`}</td></tr>`;
  })}</tbody>
</table></div>` : html`<p>No certificates uploaded.</p>`}`);
  });

  // ---- API keys ----------------------------------------------------------------------------
  async function keysPage(reply: FastifyReply, c: PortalCaller, notice?: string, form?: { values: Form; error: string }) {
    const keys = await s.apiKeys.list(c.auth, { limit: 100, offset: 0 });
    const on = form ? fieldOfMessage(form.error, ['permissions', 'name', 'environment']) ?? (/permission/.test(form.error) ? 'permissions' : undefined) : undefined;
    return render(reply, { c, title: 'API keys', section: 'api-keys', notice }, html`
<div class="table-wrap"><table>
<thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Environment</th><th scope="col">Permissions</th><th scope="col">Last used</th><th scope="col">State</th></tr></thead>
<tbody>${keys.data.map((k) => html`<tr><td>${k.name}</td><td><code>${k.key_prefix}…${k.key_last4}</code></td><td>${k.environment}</td><td>${k.permissions ? k.permissions.join(', ') : 'root'}</td><td>${when(k.last_used_at)}</td>
<td>${k.revoked_at ? html`revoked ${when(k.revoked_at)}` : k.id === c.auth.keyId ? 'this session’s key' : actionForm(`/portal/api-keys/${seg(k.id)}/revoke`, c.csrf, 'Revoke', 'danger')}</td></tr>`)}</tbody>
</table></div>
<h2>Create a restricted key</h2>
${form && !on ? html`<p class="alert" role="alert">${form.error}</p>` : ''}
<form class="stack card" method="post" action="/portal/api-keys" novalidate>
<input type="hidden" name="_csrf" value="${c.csrf}">
${field({ name: 'name', label: 'Name', value: form ? str(form.values, 'name') : '', error: on === 'name' ? form?.error : undefined })}
${select({ name: 'environment', label: 'Environment', value: form ? str(form.values, 'environment') : 'test', error: on === 'environment' ? form?.error : undefined, options: [['test', 'test (sandbox)'], ['live', 'live']] })}
${checkboxes({ name: 'permissions', legend: 'Permissions', options: PERMISSION_NAMES, checked: form ? list(form.values, 'permissions') : [], error: on === 'permissions' ? form?.error : undefined, hint: 'country:XX limits the key to one country.' })}
<div><button type="submit">Create key</button></div>
</form>`);
  }

  app.get('/api-keys', async (req, reply) => keysPage(reply, callerOf(req), noticeOf(req)));

  app.post('/api-keys', async (req, reply) => {
    const c = callerOf(req);
    const f = formOf(req);
    let created;
    try {
      const permissions = list(f, 'permissions');
      // The portal creates restricted keys only (a root key is made with the API).
      if (permissions.length === 0) throw badRequest('choose at least one permission: the portal creates restricted keys');
      const environment = str(f, 'environment') || 'test';
      if (environment !== 'test' && environment !== 'live') throw badRequest("environment must be 'test' or 'live'");
      created = await s.apiKeys.create(c.auth, { name: str(f, 'name').trim() || undefined, environment: environment as Environment, permissions });
    } catch (err) {
      const error = formError(err, reply);
      return keysPage(reply, c, undefined, { values: f, error });
    }
    return render(reply, { c, title: 'API key created', section: 'api-keys' }, html`
<div class="warn" role="status"><p><strong>Copy the key now: it is shown only this once.</strong> The service keeps only its hash.</p>
<code class="secret" id="new-key">${created.key}</code></div>
<dl class="facts card"><dt>Name</dt><dd>${created.name}</dd><dt>Environment</dt><dd>${created.environment}</dd><dt>Permissions</dt><dd>${(created.permissions ?? []).join(', ')}</dd></dl>
<p><a class="button" href="/portal/api-keys">Back to the keys</a></p>`);
  });

  app.post('/api-keys/:id/revoke', async (req, reply) => {
    await s.apiKeys.revoke(callerOf(req).auth, idParam(req, 'API key'));
    return reply.redirect('/portal/api-keys?notice=key_revoked', 303);
  });
}

/** The placements of render hints, top to bottom (core/render-hint.ts). */
const PLACEMENTS = ['header', 'body', 'footer_top', 'footer_bottom', 'footer_right'] as const;

interface ReceiptLine { description?: unknown; quantity?: unknown; total_amount?: unknown; tax_rate?: unknown }

/**
 * The receipt as the portal draws it when the receipt service cannot: the location, the
 * lines and totals of the request, and every render hint at its placement (the QR as the
 * image the plug-in draws). The receipt service's own rendering (src/receipts) is preferred.
 */
function fallbackReceipt(t: TransactionView, location: LocationView | null): SafeHtml {
  const req = (t.request_payload ?? {}) as { items?: ReceiptLine[]; tax_amount?: unknown; timestamp?: unknown };
  const hintsAt = (p: string) => t.render_hints.filter((h) => h.placement === p).map((h) => h.kind === 'image_url' || h.kind === 'qr_url' || h.kind === 'qr_data'
    ? (h.kind === 'image_url' ? html`<img src="/portal/transactions/${seg(t.id)}/qr.png" alt="QR code to verify this receipt with the tax authority" width="192" height="192">` : html`<p><strong>${h.key.replace(/_/g, ' ')}</strong>: <code>${h.value}</code></p>`)
    : html`<p><strong>${h.key.replace(/_/g, ' ')}</strong>: ${h.value}</p>`);
  const amount = (v: unknown) => (typeof v === 'number' ? money(v, t.currency) : '');
  return html`<article class="receipt" aria-label="Receipt">
${location ? html`<p><strong>${location.name}</strong>${location.address ? html`<br>${location.address}` : ''}${location.tax_id ? html`<br>${location.tax_id}` : ''}</p>` : ''}
${hintsAt('header')}
<p>${typeof req.timestamp === 'string' ? when(req.timestamp) : when(t.created_at)}</p>
${Array.isArray(req.items) ? html`<table><tbody>${req.items.map((i) => html`<tr><td>${String(i.quantity ?? '')} × ${String(i.description ?? '')}</td><td>${amount(i.total_amount)}</td></tr>`)}</tbody></table>` : ''}
${typeof req.tax_amount === 'number' ? html`<p>VAT: ${amount(req.tax_amount)}</p>` : ''}
<p><strong>Total: ${money(t.amount, t.currency)}</strong></p>
${PLACEMENTS.slice(1).map((p) => hintsAt(p))}
${t.render_hints.filter((h) => !(PLACEMENTS as readonly string[]).includes(h.placement)).map((h) => html`<p><strong>${h.key.replace(/_/g, ' ')}</strong>: ${h.value}</p>`)}
</article>`;
}

const STEP_LABELS: Record<string, string> = {
  api_key_created: 'Create an API key',
  location_registered: 'Register a location',
  certificate_uploaded: 'Upload a signing certificate',
  first_test_transaction: 'Send a first test transaction',
  webhook_configured: 'Configure a webhook',
  live_key_created: 'Create a live key',
};
