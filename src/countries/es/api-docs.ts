/** Documentation the three Spanish systems share (their api-docs.ts files): the tax and rate rules, the line surcharge. */
import { str, type JsonSchema } from '../shared/api-docs-parts.ts';
import { RATES, ratesText } from './tax.ts';

/** `country_config.tax` (./tax.ts): VERI*FACTU takes the three, TicketBAI IVA only (SII: `SII_TAX_CONFIG_DOC`). */
export const taxConfigDoc = (all: boolean): JsonSchema =>
  all
    ? str(`the indirect tax the location charges: iva (default; rates ${ratesText(RATES.iva)}), igic (Canary Islands; ${ratesText(RATES.igic)}) or ipsi (Ceuta, Melilla; ${ratesText(RATES.ipsi)}), written in DetalleDesglose/Impuesto`, { enum: ['iva', 'igic', 'ipsi'], default: 'iva' })
    : str(`iva only (the default): IGIC and IPSI locations use verifactu; tax_rate must be an IVA rate (${ratesText(RATES.iva)})`, { enum: ['iva'], default: 'iva' });

/** SII's `country_config.tax`: the three; an IGIC or IPSI sale is booked as not subject to IVA (../es-sii/xml.ts). */
export const SII_TAX_CONFIG_DOC: JsonSchema = str(
  `the indirect tax the location charges: iva (default; rates ${ratesText(RATES.iva)}), igic (Canary Islands; ${ratesText(RATES.igic)}) or ipsi (Ceuta, Melilla; ${ratesText(RATES.ipsi)}); ` +
    'an IGIC or IPSI sale is reported with ClaveRegimenEspecialOTrascendencia 08 and its total in NoSujeta/ImporteTAIReglasLocalizacion (not subject to IVA), and takes no metadata.exemption_code',
  { enum: ['iva', 'igic', 'ipsi'], default: 'iva' },
);

/** `country_config.vat_regime` (./regime.ts): the issuer's own VAT regime; SII takes `general` only. */
export const vatRegimeConfigDoc = (system: 'ticketbai' | 'verifactu' | 'sii'): JsonSchema =>
  system === 'sii'
    ? str('general only (the default): the SII regime keys have none for recargo de equivalencia or the simplified regime', { enum: ['general'], default: 'general' })
    : str(
        'the issuer\'s own VAT regime (IVA locations): general (default), recargo_equivalencia (a retailer in recargo de equivalencia, Ley 37/1992 arts. 154-163) or simplified (régimen simplificado, arts. 122-123); ' +
          (system === 'ticketbai'
            ? 'written as Claves 51 / 52 and OperacionEnRecargoDeEquivalenciaORegimenSimplificado S'
            : 'written as DetalleDesglose/ClaveRegimen 18 / 20') +
          '; such a location takes no metadata.exemption_code',
        { enum: ['general', 'recargo_equivalencia', 'simplified'], default: 'general' },
      );

/** The line surcharge (./surcharge.ts): recargo de equivalencia. */
export const SPAIN_ITEM_PROPERTIES: Record<string, JsonSchema> = {
  surcharge_rate: {
    type: 'number',
    description:
      'recargo de equivalencia (Ley 37/1992 arts. 154-163) on a sale of goods to a retailer in that regime, in percent, paired with the IVA rate: ' +
      '5.2 or 1.75 (tobacco) with 21, 1.4 with 10, 0.5 with 4, 0.62 or 0.5 with 5, 1 with 7.5, 0.26 with 2, 0 with 0; IVA only, not on an exempt line. ' +
      'Guide form: hundredths of a percent (520).',
  },
  surcharge_amount: {
    type: 'integer',
    description:
      'minor units, round-half-up(quantity × unit_price × surcharge_rate / 100); computed when left out. Not part of the line\'s total_amount ' +
      '(net + tax) but of the request\'s: total_amount = pretax_amount + tax_amount + the lines\' surcharge_amount.',
  },
};

/**
 * `metadata.operation_date` (./operation-date.ts), in each Spanish system's metadata sentence:
 * `record` names where the record writes it, `issueDay` what "the issue date" is there.
 */
export const operationDateMetadataDoc = (record: string, issueDay: string): string =>
  `operation_date (DD-MM-YYYY; the day the goods were delivered or the service rendered when the invoice is issued on another day, RD 1619/2012 art. 6.1.f): ` +
  `written as ${record} and printed on the receipt ("Fecha de operación"); not later than ${issueDay} (400); the issue date itself is not written`;
