/**
 * What the API reference (GET /openapi.json) and the quickstarts show of each fiscal
 * system: its `country_config` as a JSON schema, and a worked example of a location and a
 * sale. Documentation only: the systems validate with their own code (`validateConfig`,
 * `validateTransaction`) and their own messages; test/api/openapi.test.ts sends every
 * example to the service and requires a 201, so an example cannot drift from the rules.
 *
 * One file per system, in its country folder (country facts stay there); this list is in
 * registry order, and the test requires one entry per registered system.
 */
import { ticketBaiDocs } from './es-ticketbai/api-docs.ts';
import { verifactuDocs } from './es-verifactu/api-docs.ts';
import { siiDocs } from './es-sii/api-docs.ts';
import { sdiDocs } from './it-sdi/api-docs.ts';
import { dcDocs } from './it-dc/api-docs.ts';
import { nf525Docs } from './fr-nf525/api-docs.ts';
import { saftDocs } from './pt-saft/api-docs.ts';
import { myDataDocs } from './gr-mydata/api-docs.ts';

export type { JsonSchema, SystemApiDocs } from './shared/api-docs-parts.ts';
export { EXAMPLE_LOCATION_ID } from './shared/api-docs-parts.ts';
import type { SystemApiDocs } from './shared/api-docs-parts.ts';

export const SYSTEM_API_DOCS: readonly SystemApiDocs[] = [
  ticketBaiDocs, verifactuDocs, siiDocs, sdiDocs, dcDocs, nf525Docs, saftDocs, myDataDocs,
];
