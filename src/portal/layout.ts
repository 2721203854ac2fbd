import { html, type HtmlValue, type SafeHtml } from './html.ts';

/** The sections of the navigation, in order: path under /portal and label. */
export const SECTIONS = [
  ['account', 'Account'],
  ['locations', 'Locations'],
  ['transactions', 'Transactions'],
  ['failures', 'Failures'],
  ['webhooks', 'Webhooks'],
  ['certificates', 'Certificates'],
  ['api-keys', 'API keys'],
] as const;
export type Section = (typeof SECTIONS)[number][0];

export interface PageOptions {
  title: string;
  /** Signed in: the navigation and the sign-out form (with its CSRF token). */
  session?: { csrf: string; environment: string } | undefined;
  section?: Section | undefined;
  /** A fixed message after a redirect (never text from the request). */
  notice?: string | undefined;
}

/** A whole page: skip link, header with navigation, one main landmark, one h1. */
export function page(o: PageOptions, body: HtmlValue): SafeHtml {
  const nav = o.session
    ? html`<nav aria-label="Portal sections"><ul>${SECTIONS.map(([path, label]) =>
        html`<li><a href="/portal/${path}"${o.section === path ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul></nav>
      ${o.session.environment === 'test' ? html`<span class="env" title="Signed in with a test key: sandbox data">TEST</span>` : ''}
      <form method="post" action="/portal/sign-out"><input type="hidden" name="_csrf" value="${o.session.csrf}"><button type="submit">Sign out</button></form>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · Fiscalization portal</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/portal/assets/portal.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/portal">Fiscalization portal</a>${nav}</header>
<main id="main" tabindex="-1">
<h1>${o.title}</h1>
${o.notice ? html`<p class="notice" role="status">${o.notice}</p>` : ''}
${body}
</main>
</body>
</html>`;
}

export interface FieldOptions {
  name: string;
  label: string;
  /** The control's value (text inputs, textarea). */
  value?: string | undefined;
  type?: 'text' | 'password' | 'url' | 'date' | 'textarea';
  hint?: string | undefined;
  /** The server's message for this field: shown under it and tied to it (aria-describedby, aria-invalid). */
  error?: string | undefined;
  required?: boolean;
  autocomplete?: string;
  autofocus?: boolean;
}

/** A labelled control with its hint and error, both referenced by aria-describedby. */
export function field(o: FieldOptions): SafeHtml {
  const id = `f-${o.name}`;
  const described = [o.hint ? `${id}-hint` : '', o.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = html` id="${id}" name="${o.name}"${described ? html` aria-describedby="${described}"` : ''}${o.error ? html` aria-invalid="true"` : ''}${o.required ? html` required` : ''}${o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''}${o.autofocus ? html` autofocus` : ''}`;
  const control = o.type === 'textarea'
    ? html`<textarea${attrs} spellcheck="false">${o.value ?? ''}</textarea>`
    : html`<input type="${o.type ?? 'text'}"${attrs} value="${o.value ?? ''}">`;
  return html`<div class="field">
<label for="${id}">${o.label}</label>
${o.hint ? html`<span class="hint" id="${id}-hint">${o.hint}</span>` : ''}
${control}
${o.error ? html`<span class="error" id="${id}-error">${o.error}</span>` : ''}
</div>`;
}

/** A labelled select. */
export function select(o: { name: string; label: string; options: readonly (readonly [string, string])[]; value?: string | undefined; error?: string | undefined }): SafeHtml {
  const id = `f-${o.name}`;
  return html`<div class="field">
<label for="${id}">${o.label}</label>
<select id="${id}" name="${o.name}"${o.error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
${o.options.map(([v, l]) => html`<option value="${v}"${v === (o.value ?? '') ? html` selected` : ''}>${l}</option>`)}
</select>
${o.error ? html`<span class="error" id="${id}-error">${o.error}</span>` : ''}
</div>`;
}

/** A group of checkboxes (permissions, event types) as one fieldset with a legend. */
export function checkboxes(o: { name: string; legend: string; options: readonly string[]; checked?: readonly string[]; error?: string | undefined; hint?: string }): SafeHtml {
  const id = `f-${o.name}`;
  const described = [o.hint ? `${id}-hint` : '', o.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<fieldset class="field"${described ? html` aria-describedby="${described}"` : ''}>
<legend>${o.legend}</legend>
${o.hint ? html`<span class="hint" id="${id}-hint">${o.hint}</span>` : ''}
<div class="checks">${o.options.map((v, i) => html`<label><input type="checkbox" name="${o.name}" value="${v}" id="${id}-${i}"${o.checked?.includes(v) ? html` checked` : ''}> ${v}</label>`)}</div>
${o.error ? html`<span class="error" id="${id}-error">${o.error}</span>` : ''}
</fieldset>`;
}

/** A POST form with one button (deactivate, revoke, send test, sign out), CSRF token included. */
export function actionForm(action: string, csrf: string, label: string, cls = 'secondary'): SafeHtml {
  return html`<form class="inline" method="post" action="${action}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="${cls}">${label}</button></form>`;
}

/** A status as a labelled badge. */
export const badge = (status: string): SafeHtml => html`<span class="status status-${status}">${status.replace(/_/g, ' ')}</span>`;

/** Dates as UTC, minute precision (the API's times are UTC). */
export function when(d: Date | string | null | undefined): string {
  if (!d) return '—';
  const date = typeof d === 'string' ? new Date(d) : d;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Cents → "12.34 EUR". */
export const money = (cents: number, currency: string): string => `${(cents / 100).toFixed(2)} ${currency}`;
