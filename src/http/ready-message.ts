import type { AddressInfo } from 'node:net';

/** `http://<address>:<port>` of a listening server (IPv6 in brackets). */
export function listenUrl(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') return String(address);
  return `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
}

/**
 * What a host says once it listens (README "Two commands", docs/local-host.md): the
 * reference and the first call (public sign-up, which answers the first test key). The
 * cloud host (`npm start`) and the local host (`npm run local`) say the same: an
 * integrator meets either first.
 */
export function gettingStarted(url: string): string {
  return `reference ${url}/docs (OpenAPI ${url}/openapi.json). ` +
    `To begin, POST ${url}/v1/accounts with name and billing_email answers an account and its first test API key (see the README, Walkthrough)`;
}
