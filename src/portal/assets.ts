/**
 * The portal's one stylesheet, served by the portal itself (`/portal/assets/portal.css`):
 * no CDN, no inline style (the CSP allows styles from 'self' only), no build step. Kept
 * in a TypeScript module so the single-executable bundle carries it without file access.
 *
 * Phone widths: one column, the navigation wraps, tables scroll sideways inside their box.
 * Focus: every focusable element shows a thick outline (keyboard users see where they are).
 */
export const PORTAL_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;line-height:1.45;color:#1b1f24;background:#f4f6f8}
body{margin:0}
a{color:#0b57b8}
a:hover{color:#073f86}
:focus-visible{outline:3px solid #f29d00;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
.skip:focus{left:.5rem}
header.top{background:#102a43;color:#fff;padding:.6rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem}
header.top .brand{font-weight:700;font-size:1.05rem;color:#fff;text-decoration:none;margin-right:auto}
header.top nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
header.top nav a{color:#d9e8ff;text-decoration:none;padding:.2rem 0;display:inline-block}
header.top nav a[aria-current="page"]{color:#fff;border-bottom:2px solid #f29d00}
header.top form{margin:0}
header.top .env{font-size:.8rem;background:#f29d00;color:#102a43;border-radius:3px;padding:.1rem .4rem;font-weight:700}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:1.5rem 0 .6rem}
.card{background:#fff;border:1px solid #d5dbe1;border-radius:6px;padding:1rem;margin:0 0 1rem}
.card>h2:first-child,.alert>h2:first-child{margin-top:0}
.card dl.facts+.table-wrap{margin-top:1rem}
.notice{background:#e6f4ea;border:1px solid #8ccf9f;border-radius:6px;padding:.7rem 1rem;margin:0 0 1rem}
.alert{background:#fdecea;border:1px solid #f0a39b;border-radius:6px;padding:.7rem 1rem;margin:0 0 1rem}
.warn{background:#fff6e0;border:1px solid #f1c65b;border-radius:6px;padding:.7rem 1rem;margin:0 0 1rem}
.secret{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1rem;background:#102a43;color:#fff;padding:.6rem .8rem;border-radius:4px;word-break:break-all;display:block}
.table-wrap{overflow-x:auto;background:#fff;border:1px solid #d5dbe1;border-radius:6px;margin:0 0 1rem}
table{border-collapse:collapse;width:100%;font-size:.93rem}
th,td{text-align:left;padding:.5rem .65rem;border-bottom:1px solid #e6e9ed;vertical-align:top}
th{background:#eef1f4;font-weight:600}
tr:last-child td{border-bottom:0}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dl.facts dt{font-weight:600;color:#3d4a57}
dl.facts dd{margin:0;word-break:break-word}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88rem}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;border:1px solid #e1e4e8;padding:.6rem;border-radius:4px;margin:0}
form.stack{display:grid;gap:.9rem;max-width:40rem}
form.filters{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end;margin:0 0 1rem}
form.inline{display:inline}
.field{display:grid;gap:.25rem}
.field label,.field legend{font-weight:600}
.field .hint{font-size:.85rem;color:#52606d}
.field .error{color:#b3261e;font-weight:600;font-size:.9rem}
fieldset{border:1px solid #d5dbe1;border-radius:6px;padding:.6rem .9rem;margin:0}
fieldset .checks{display:grid;grid-template-columns:repeat(auto-fill,minmax(11rem,1fr));gap:.2rem .8rem}
fieldset .checks label{font-weight:400}
input[type=text],input[type=password],input[type=url],input[type=date],select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid #9aa5b1;border-radius:4px;background:#fff;width:100%;max-width:40rem}
textarea{min-height:9rem;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88rem}
[aria-invalid="true"]{border-color:#b3261e;border-width:2px}
button,.button{font:inherit;font-weight:600;padding:.5rem 1rem;border-radius:4px;border:1px solid #0b57b8;background:#0b57b8;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:#0b57b8}
button.danger{background:#b3261e;border-color:#b3261e}
header.top button{background:transparent;border-color:#d9e8ff;color:#fff;padding:.25rem .7rem}
.status{display:inline-block;padding:.05rem .45rem;border-radius:3px;font-size:.85rem;font-weight:600;background:#e6e9ed}
.status-success,.status-active,.status-succeeded,.status-completed{background:#e6f4ea;color:#1e6b34}
.status-failed,.status-failed_permanent,.status-dead,.status-inactive{background:#fdecea;color:#8c1d18}
.status-pending,.status-processing,.status-pending_submission,.status-pending_batch,.status-offline_pending{background:#fff6e0;color:#7a5200}
ul.checklist{list-style:none;padding:0;margin:0}
ul.checklist li{padding:.25rem 0}
ul.checklist .status{min-width:3.6rem;text-align:center}
.pager{display:flex;gap:1rem;margin:.5rem 0 1rem}
.muted{color:#52606d}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:0 0 1rem}
.receipt{max-width:24rem;background:#fff;border:1px dashed #9aa5b1;padding:1rem;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.receipt img{max-width:12rem;height:auto;display:block;margin:.5rem auto}
@media (max-width:40rem){
  main{padding:.75rem}
  h1{font-size:1.35rem}
  dl.facts{grid-template-columns:1fr}
  dl.facts dt{margin-top:.4rem}
  header.top{padding:.5rem .75rem}
  form.filters>*{flex:1 1 100%}
}
`;
