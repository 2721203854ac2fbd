/**
 * A package imported the first time it is needed, once, instead of when the module that
 * uses it loads.
 *
 * Why: most processes never use the heavy packages a few features need (pdfkit and its
 * font engine for PDF and PNG receipts, Stripe, the SMTP client, the Redis client), yet
 * importing them cost every start of the service, of each CLI command, of the local host
 * and of each test file (measured: eight test files importing the test harness, 15.4 s of
 * import with them loaded at start, 13.2 s without, ~0.27 s a file). date-holidays (SII
 * deadlines) is still loaded at start: the deadline is computed inside a synchronous build.
 *
 * The argument must be a function calling `import('<literal>')`: the bundler of the single
 * executable (scripts/sea/bundle.mjs, esbuild) follows such a call and puts the package
 * in the bundle; a computed name or a `require` made at run time would not be there.
 */
export function lazyImport<M>(load: () => Promise<M>): () => Promise<M> {
  let loading: Promise<M> | undefined;
  return () => {
    if (loading === undefined) {
      const attempt = load();
      loading = attempt;
      // A failed import (a broken installation) is tried again next time, not kept.
      attempt.catch(() => {
        if (loading === attempt) loading = undefined;
      });
    }
    return loading;
  };
}
