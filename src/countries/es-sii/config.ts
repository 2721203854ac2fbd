/**
 * SII (Suministro Inmediato de Información, RD 596/2016) location config.
 * The spec: "`sii` needs only `system`, `legal_name`, `certificate_id`"; anything else
 * (a TicketBAI `tsa_url`, say) is refused as an unknown field.
 */
import type { LocationConfigInput } from '../types.ts';
import { compact, rejectUnknownFields } from '../shared/config-fields.ts';
import { SPAIN_COMMON_FIELDS, checkSpainTaxId, readSpainCommon, readSpainConfig } from '../es/common.ts';

export function validateSiiConfig({ config, taxId }: LocationConfigInput): Record<string, unknown> {
  const cfg = readSpainConfig(config, 'sii');
  rejectUnknownFields(cfg, SPAIN_COMMON_FIELDS, 'sii');

  const common = readSpainCommon(cfg, 'sii');
  checkSpainTaxId(taxId);
  return compact({ ...common });
}
