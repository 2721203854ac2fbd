/**
 * The issuer's tax id as records write it, and what stands in for it when the location
 * has none (used by the Spanish builders and clients, and SAF-T PT).
 */
import type { BuildInput } from '../types.ts';

/** The location's tax id as the records write it (null when the location has none). */
export function issuerTaxId(input: Pick<BuildInput, 'location'>): string | null {
  const id = input.location.tax_id?.trim();
  return id === undefined || id === '' ? null : id;
}

/**
 * Stands in for the issuer tax id inside identifiers and QR codes (TBAI id, VERI*FACTU
 * QR `nif`, SAF-T PT QR field A) when the location has no `tax_id`: a location may be
 * created without one to try the sandbox. The real builders refuse to sign without it.
 */
export const MISSING_TAX_ID = '000000000';
